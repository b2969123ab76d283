"""Which database, and how to open it: one SQLAlchemy URL, SQLite or PostgreSQL (psycopg 3).

SQLite is opened in WAL mode with a busy timeout, foreign keys on and ``synchronous=NORMAL`` so
several processes can share one file; writers start with ``BEGIN IMMEDIATE`` so they queue on the
lock instead of failing half-way. ``resolve_url`` and the URL parsing live in
:mod:`~tooltray.memory.store.url`, so choosing a database never imports SQLAlchemy; the
read-only engine of ``tooltray sql`` is the console's (:mod:`tooltray.memory.cli.sqlconsole`).
Each transaction may set how long it waits for a lock (the ``BUSY_MS`` execution option:
SQLite's busy timeout, PostgreSQL's ``lock_timeout``), so that the store's time budget bounds
the wait (:class:`~tooltray.memory.store.store.Patience`).
"""

from __future__ import annotations

import sqlite3

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, Connection
from sqlalchemy.pool import ConnectionPoolEntry, StaticPool

from tooltray.memory.store.probe_file import BUSY_TIMEOUT_MS
from tooltray.memory.store.url import is_sqlite as is_sqlite  # re-exported: callers use them
from tooltray.memory.store.url import parse_url as parse_url
from tooltray.memory.store.url import sqlite_path as sqlite_path

IMMEDIATE = "tooltray_immediate"
BUSY_MS = "tooltray_busy_ms"


def make_engine(url: str) -> Engine:
    """An engine for reads and writes, tuned for several processes sharing one database."""
    parsed = parse_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed)
    engine = create_engine(parsed, pool_pre_ping=True)
    event.listen(engine, "begin", _pg_begin)
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
