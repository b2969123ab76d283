"""One statement on a driver connection (sqlite3 or psycopg), and its refusal in one line.

Shared by the stdlib path of :mod:`~tooltray.memory.cli.sqlconsole.sql` and the SQLAlchemy path of
:mod:`~tooltray.memory.cli.sqlconsole.sql_pg`, so neither imports the other back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tooltray.memory.store.probe_file import first_line
from tooltray.tools.errors import StoreError

DEFAULT_LIMIT = 1000
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


def from_driver(exc: BaseException) -> bool:
    """True when ``exc`` comes from the database driver (sqlite3 or psycopg)."""
    return type(exc).__module__.split(".")[0] in ("sqlite3", "psycopg")


def execute(raw: Any, query: str, limit: int, *, prepare: bool = False) -> QueryResult:
    """Run ``query`` on the driver connection ``raw``; at most ``limit`` rows."""
    cursor = raw.cursor()
    try:
        if prepare:
            cursor.execute(query, prepare=True)  # one statement only: no "...; DROP ..."
        else:
            cursor.execute(query)
        if cursor.description is None:
            return QueryResult([], [])
        columns = [str(d[0]) for d in cursor.description]
        rows = [tuple(r) for r in cursor.fetchmany(limit + 1)]
        return QueryResult(columns, rows[:limit], truncated=len(rows) > limit)
    finally:
        cursor.close()


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
