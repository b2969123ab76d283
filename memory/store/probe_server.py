"""Probe a database through SQLAlchemy: a server, or a SQLite URL the plain reader leaves alone.

Kept apart from :mod:`tooltray.memory.store.probe_file` so that probing a plain SQLite file never
imports SQLAlchemy (see :mod:`tooltray.memory.store.url`).
"""

from __future__ import annotations

from sqlalchemy import inspect, text
from sqlalchemy.exc import SQLAlchemyError

from tooltray.memory.store.engine import is_sqlite, make_engine, sqlite_path
from tooltray.memory.store.probe_file import (
    VERSION_TABLE,
    Probe,
    classify,
    first_line,
    probe_sqlite_file,
)
from tooltray.memory.store.url import display_url
from tooltray.tools.errors import StoreError


def probe_other(url: str) -> Probe:
    """Classify the database at ``url`` (any URL SQLAlchemy reads) without writing to it."""
    if is_sqlite(url):
        path = sqlite_path(url)
        return probe_sqlite_file(path) if path is not None else Probe("empty")
    return _probe_server(url)


def _probe_server(url: str) -> Probe:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
            revision = None
            if VERSION_TABLE in tables:
                row = conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).first()
                revision = str(row[0]) if row else None
            return classify(tables, revision)
    except SQLAlchemyError as exc:
        raise StoreError(
            f"cannot read the database at {display_url(url)}: {first_line(exc)}; "
            "check that the server is running and the URL (--db / TOOLTRAY_DB) is right"
        ) from exc
    finally:
        engine.dispose()
