"""Read-only engines: what ``tooltray sql`` runs on for a URL the stdlib reader leaves alone."""

from __future__ import annotations

import sqlite3
from typing import Any
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL

from tooltray.memory.cli.sqlconsole.guard import existing, lock_down
from tooltray.memory.store.url import parse_url, sqlite_path
from tooltray.tools.errors import StoreError


def readonly_engine(url: str) -> Engine:
    """An engine that cannot change the database (what ``tooltray sql`` runs on).

    SQLite: the file is opened ``mode=ro`` with ``PRAGMA query_only=ON``, an authorizer that
    refuses writes, DDL, ATTACH/DETACH and writing PRAGMAs, and a limit of zero attached files.
    PostgreSQL: every transaction is read-only (``default_transaction_read_only``). A superuser can
    still switch that off from SQL, so for real protection point ``--sql-url``/``TOOLTRAY_SQL_URL``
    at a role that only has ``SELECT`` grants.
    """
    parsed = parse_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_readonly_engine(url)
    engine = create_engine(parsed, pool_pre_ping=True)
    event.listen(engine, "checkout", _pg_readonly_checkout)
    return engine


def _sqlite_readonly_engine(url: str) -> Engine:
    path = sqlite_path(url)
    if path is None:
        raise StoreError(f"{url!r} is an in-memory database: a read-only view needs a file")
    ro = URL.create(
        "sqlite+pysqlite",
        database=f"file:{quote(str(existing(path).resolve()))}",
        query={"mode": "ro", "uri": "true"},
    )
    engine = create_engine(ro, connect_args={"check_same_thread": False})
    event.listen(engine, "connect", _sqlite_readonly_connect)
    return engine


def _sqlite_readonly_connect(dbapi_connection: sqlite3.Connection, record: Any) -> None:
    lock_down(dbapi_connection)


def _pg_readonly_checkout(dbapi_connection: Any, record: Any, proxy: Any) -> None:
    autocommit = dbapi_connection.autocommit
    dbapi_connection.autocommit = True
    with dbapi_connection.cursor() as cursor:
        cursor.execute("SET default_transaction_read_only = on")
    dbapi_connection.autocommit = autocommit
