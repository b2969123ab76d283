"""Alembic environment for tooltray: configured in code by :mod:`tooltray.memory.store.migrate`.

The caller hands over an open connection in ``config.attributes["connection"]`` (so SQLite gets the
store's PRAGMAs and ``BEGIN IMMEDIATE``); with none, one is opened from ``sqlalchemy.url``.
``render_as_batch`` lets later migrations alter SQLite tables by copy-and-move.
"""

from __future__ import annotations

from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy.engine import Connection

from tooltray.memory.store.tables import Base, UTCDateTime

config = context.config
target_metadata = Base.metadata


def _render_item(kind: str, obj: Any, autogen: AutogenContext) -> str | Literal[False]:
    """Render our UTC type as plain ``sa.DateTime`` so migrations never import the models."""
    if kind == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def _configure(connection: Connection | None) -> None:
    context.configure(
        connection=connection,
        url=None if connection is not None else config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
        render_item=_render_item,
        literal_binds=connection is None,
    )


def run_offline() -> None:
    """Print the SQL instead of running it (``alembic upgrade --sql``)."""
    _configure(None)
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    """Run the migrations on the caller's connection, or on a fresh engine."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    from tooltray.memory.store.engine import make_engine

    engine = make_engine(config.get_main_option("sqlalchemy.url") or "")
    try:
        with engine.connect() as conn:
            _configure(conn)
            with context.begin_transaction():
                context.run_migrations()
            conn.commit()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
