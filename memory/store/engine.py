"""Which database, and how to open it: one SQLAlchemy URL, SQLite or PostgreSQL (psycopg 3).

SQLite is opened in WAL mode with a busy timeout, foreign keys on and ``synchronous=NORMAL`` so
several processes can share one file; writers start with ``BEGIN IMMEDIATE`` so they queue on the
lock instead of failing half-way. Each transaction may set how long it waits for a lock (the
``BUSY_MS`` execution option: SQLite's busy timeout, PostgreSQL's ``lock_timeout``), so that the
store's time budget bounds the wait (:class:`~tooltray.memory.store.retry.Patience`).

The read-only engine is what ``tooltray sql`` runs on for a URL the plain reader of
:mod:`~tooltray.memory.store.url` leaves alone; ``resolve_url`` lives there too, so choosing a
database never imports SQLAlchemy.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import ConnectionPoolEntry, StaticPool

from tooltray.memory.store.guard import BUSY_TIMEOUT_MS, existing, lock_down
from tooltray.memory.store.url import resolve_url
from tooltray.tools.errors import StoreError

IMMEDIATE = "tooltray_immediate"
BUSY_MS = "tooltray_busy_ms"


def parse_url(url: str) -> URL:
    """Parse ``url`` (or a plain SQLite file path) and check it names a supported backend."""
    if url and "://" not in url:
        url = resolve_url(url)
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(
            f"{url!r} is not a database URL: use sqlite:///path/to/file.db "
            "or postgresql+psycopg://user@host/dbname"
        ) from exc
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(
            f"unsupported database {parsed.get_backend_name()!r} in {url!r}: "
            "tooltray stores state in SQLite or PostgreSQL"
        )
    return parsed


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (``None`` for in-memory or non-SQLite URLs)."""
    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    from tooltray.memory.store.url import check_name

    return Path(check_name(parsed.database or "")).expanduser()


def is_sqlite(url: str) -> bool:
    """True when ``url`` names a SQLite database."""
    return parse_url(url).get_backend_name() == "sqlite"


def make_engine(url: str) -> Engine:
    """An engine for reads and writes, tuned for several processes sharing one database."""
    parsed = parse_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed)
    engine = create_engine(parsed, pool_pre_ping=True)
    event.listen(engine, "begin", _pg_begin)
    return engine


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


def _sqlite_engine(parsed: URL) -> Engine:
    if parsed.database in (None, "", ":memory:"):
        engine = create_engine(
            parsed, poolclass=StaticPool, connect_args={"check_same_thread": False}
        )
    else:
        connect_args = {"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000}
        engine = create_engine(parsed, connect_args=connect_args)
    event.listen(engine, "connect", _sqlite_connect)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_connect(dbapi_connection: sqlite3.Connection, record: ConnectionPoolEntry) -> None:
    dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (see _sqlite_begin)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    options = conn.get_execution_options()
    conn.exec_driver_sql(f"PRAGMA busy_timeout={int(options.get(BUSY_MS, BUSY_TIMEOUT_MS))}")
    conn.exec_driver_sql("BEGIN IMMEDIATE" if options.get(IMMEDIATE, False) else "BEGIN")


def _pg_begin(conn: Connection) -> None:
    """A lock wait longer than the transaction's budget fails (55P03, retried) instead."""
    busy_ms = conn.get_execution_options().get(BUSY_MS)
    if busy_ms is not None:
        conn.exec_driver_sql(f"SET LOCAL lock_timeout = {max(1, int(busy_ms))}")


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
