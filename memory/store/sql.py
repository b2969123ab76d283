"""Ad-hoc SQL over the store on a read-only connection (``tooltray sql``).

One statement per call, run in a read-only transaction that is always rolled back. SQLite is
opened read-only with an authorizer (no writes, DDL, ATTACH or PRAGMA changes); PostgreSQL runs
``SET TRANSACTION READ ONLY`` first. A PostgreSQL user allowed to write can switch that back off
from SQL, so for a shared server the real protection is a role that can only read::

    CREATE ROLE tooltray_reader LOGIN PASSWORD '...';
    GRANT USAGE ON SCHEMA public TO tooltray_reader;
    GRANT SELECT ON ALL TABLES IN SCHEMA public TO tooltray_reader;

and ``--sql-url`` / ``TOOLTRAY_SQL_URL=postgresql+psycopg://tooltray_reader:...@host/db``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from tooltray.memory.store.engine import is_sqlite, readonly_engine, resolve_url
from tooltray.memory.store.probe import first_line
from tooltray.tools.errors import StoreError

ENV_SQL_URL = "TOOLTRAY_SQL_URL"
DEFAULT_LIMIT = 1000
_READONLY_HINTS = (
    "readonly",
    "read-only",
    "not authorized",
    "authorization denied",
    "attached databases",
    "query_only",
)


@dataclass(frozen=True)
class QueryResult:
    """Rows of one query, with their column names; ``truncated`` when ``limit`` cut them."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool = False


def resolve_sql_url(sql_url: str | None = None, db: str | None = None) -> str:
    """The URL ``tooltray sql`` reads: ``--sql-url``, else ``TOOLTRAY_SQL_URL``, else the db."""
    return resolve_url(sql_url or os.environ.get(ENV_SQL_URL) or db)


def run_readonly(url: str, query: str, limit: int = DEFAULT_LIMIT) -> QueryResult:
    """Run one statement on a read-only connection and return at most ``limit`` rows.

    Raises:
        StoreError: the statement failed, or tried to change something (one clear line).
    """
    if not query.strip():
        raise StoreError("empty query: pass one SQL statement, e.g. 'SELECT * FROM sessions'")
    engine = readonly_engine(url)
    try:
        with engine.connect() as conn:
            raw: Any = conn.connection.driver_connection
            try:
                return _execute(raw, query, limit, sqlite=is_sqlite(url))
            finally:
                raw.rollback()
    except (SQLAlchemyError, DBAPIError) as exc:
        raise _refusal(exc) from exc
    except Exception as exc:
        if type(exc).__module__.split(".")[0] in ("sqlite3", "psycopg"):
            raise _refusal(exc) from exc
        raise
    finally:
        engine.dispose()


def _drop_superuser(cursor: Any) -> None:
    """A superuser runs the query as ``pg_read_all_data`` (PostgreSQL 14+) for this transaction.

    A read-only transaction still lets a superuser run programs, write server files or signal
    backends (``COPY ... TO PROGRAM``, ``pg_terminate_backend``); the predefined read-all role
    can do none of that. Without it, the query is refused with the fix.
    """
    cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
    row = cursor.fetchone()
    if not row or not row[0]:
        return
    try:
        cursor.execute("SET LOCAL ROLE pg_read_all_data")
    except Exception:
        raise StoreError(
            "tooltray sql will not run as a PostgreSQL superuser on a server without the "
            "pg_read_all_data role: pass --sql-url (or TOOLTRAY_SQL_URL) for a SELECT-only role."
        ) from None


def _execute(raw: Any, query: str, limit: int, *, sqlite: bool) -> QueryResult:
    cursor = raw.cursor()
    try:
        if sqlite:
            cursor.execute(query)
        else:
            cursor.execute("SET TRANSACTION READ ONLY")
            _drop_superuser(cursor)
            cursor.execute(query, prepare=True)  # one statement only: no "...; DROP ..."
        if cursor.description is None:
            return QueryResult([], [])
        columns = [str(d[0]) for d in cursor.description]
        rows = [tuple(r) for r in cursor.fetchmany(limit + 1)]
        return QueryResult(columns, rows[:limit], truncated=len(rows) > limit)
    finally:
        cursor.close()


def _refusal(exc: BaseException) -> StoreError:
    message = first_line(exc)
    lowered = message.lower()
    if any(hint in lowered for hint in _READONLY_HINTS):
        return StoreError(
            f"query refused: {message} (this connection is read-only: writes, DDL, ATTACH "
            "and PRAGMA changes are not allowed; use SELECT)"
        )
    return StoreError(f"query failed: {message}")
