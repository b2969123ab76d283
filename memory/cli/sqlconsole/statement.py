"""One read-only statement run within bounds on a driver connection, and its refusals.

Shared by the stdlib path of :mod:`~tooltray.memory.cli.sqlconsole.sql` and the SQLAlchemy path of
:mod:`~tooltray.memory.cli.sqlconsole.sql_pg`, so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tooltray.memory.cli.sqlconsole.limits import (
    DEFAULT_ROWS,
    Limits,
    Stop,
    fetch,
    sqlite_bounds,
    sqlite_failure,
)
from tooltray.memory.store.probe import first_line
from tooltray.tools.errors import StoreError

DEFAULT_LIMIT = DEFAULT_ROWS
READER_ROLE = "tooltray_sql_reader"
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


def bounded_sqlite(connection: Any, query: str, limits: Limits) -> QueryResult:
    """Run ``query`` on a read-only SQLite ``connection`` within ``limits``."""
    with sqlite_bounds(connection, limits) as stop:
        try:
            return execute(connection, query, stop)
        except Exception as exc:
            if not from_driver(exc):
                raise
            raise (sqlite_failure(exc, stop) or refusal(exc)) from exc


def from_driver(exc: BaseException) -> bool:
    """True when ``exc`` comes from the database driver (sqlite3 or psycopg)."""
    return type(exc).__module__.split(".")[0] in ("sqlite3", "psycopg")


def execute(raw: Any, query: str, stop: Stop, *, prepare: bool = False) -> QueryResult:
    """Run ``query`` on the driver connection ``raw`` within the bounds of ``stop``."""
    cursor = raw.cursor()
    try:
        if prepare:
            cursor.execute(query, prepare=True)  # one statement only: no "...; DROP ..."
        else:
            cursor.execute(query)
        return result_of(cursor, stop)
    finally:
        cursor.close()


def result_of(cursor: Any, stop: Stop) -> QueryResult:
    """The columns and bounded rows of an executed ``cursor``."""
    if cursor.description is None:
        return QueryResult([], [])
    columns = [str(d[0]) for d in cursor.description]
    rows, more = fetch(cursor, stop)
    return QueryResult(columns, rows, truncated=more)


def refusal(exc: BaseException) -> StoreError:
    """The one line for a failed statement (a read-only refusal says so, with the fix)."""
    message = first_line(exc)
    lowered = message.lower()
    if any(hint in lowered for hint in _READONLY_HINTS):
        return StoreError(
            f"query refused: {message} (this connection is read-only: writes, DDL, ATTACH "
            "and PRAGMA changes are not allowed; use SELECT)"
        )
    return StoreError(f"query failed: {message}")
