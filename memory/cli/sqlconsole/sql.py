"""Ad-hoc SQL over the store on a read-only connection (``tooltray sql``).

One statement per call, in a read-only transaction that is always rolled back.

SQLite is opened read-only with an authorizer (no writes, DDL, ATTACH or PRAGMA changes), with
the stdlib only (:func:`~tooltray.memory.store.guard.open_readonly`): this module does not import
SQLAlchemy, so ``tooltray sql`` on a SQLite store starts fast. A URL the plain reader of
:mod:`tooltray.memory.store.url` leaves alone, and PostgreSQL, run in
:mod:`tooltray.memory.store.sql_pg`.

PostgreSQL: a read-only transaction stops writes to tables, but not what a powerful role can do
outside them: ``COPY ... TO PROGRAM`` (a shell command on the server), ``COPY ... TO 'file'``,
``pg_read_file``, ``pg_terminate_backend`` on the agents' connections. Switching to a weaker
role (``SET ROLE``) inside such a session is no sandbox: the session user can always take its
privileges back from SQL (``set_config('role', current_setting('session_authorization'),
true)`` inside ``query_to_xml`` or a ``DO`` block). So the statement never runs on a powerful
session at all:

* Before the statement, the session user is checked: superuser, ``CREATEROLE``,
  ``REPLICATION``, or a member of a role that is one of those or of the predefined roles that
  reach outside the database (:data:`POWERFUL_ROLES`). A role with none of these runs the
  statement itself (read-only; it can still signal its own other sessions, so give the agents a
  different role from the one you query with, or use ``--sql-url``).
* A powerful role is only used to prepare :data:`READER_ROLE`: created ``NOLOGIN`` with no
  attributes, memberships revoked, ``USAGE`` on the store's schema and ``SELECT`` on the store's
  tables only. Under an advisory lock it gets ``LOGIN`` and a fresh random password (valid for
  minutes), tooltray opens a *separate connection as that role*, and the role goes back to
  ``NOLOGIN`` without a password before the lock is released. The statement runs on that
  connection, whose session user is itself unprivileged, after the same check (a role someone
  widened is refused, never used).
* When that is impossible (the role cannot create roles, or ``pg_hba.conf`` does not let the
  reader log in with a password), the statement is refused with one line naming the fix: a
  SELECT-only role given with ``--sql-url`` / ``TOOLTRAY_SQL_URL``::

      CREATE ROLE tooltray_reader LOGIN PASSWORD '...';
      GRANT USAGE ON SCHEMA public TO tooltray_reader;
      GRANT SELECT ON ALL TABLES IN SCHEMA public TO tooltray_reader;

To remove tooltray's reader: ``DROP OWNED BY tooltray_sql_reader`` in each database, then
``DROP ROLE tooltray_sql_reader``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooltray.memory.store.guard import open_readonly
from tooltray.memory.store.probe import first_line
from tooltray.memory.store.url import plain_sqlite_path, resolve_url
from tooltray.tools.errors import StoreError

ENV_SQL_URL = "TOOLTRAY_SQL_URL"
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


def resolve_sql_url(sql_url: str | None = None, db: str | None = None) -> str:
    """The URL ``tooltray sql`` reads: ``--sql-url``, else ``TOOLTRAY_SQL_URL``, else the db."""
    return resolve_url(sql_url or os.environ.get(ENV_SQL_URL) or db)


def run_readonly(url: str, query: str, limit: int = DEFAULT_LIMIT) -> QueryResult:
    """Run one statement on a read-only, unprivileged connection; at most ``limit`` rows.

    Raises:
        StoreError: the statement failed, tried to change something, or no unprivileged
            connection could be had (one clear line).
    """
    if not query.strip():
        raise StoreError("empty query: pass one SQL statement, e.g. 'SELECT * FROM sessions'")
    path = plain_sqlite_path(url)
    if path is None:
        from tooltray.memory.store.sql_pg import run_engine

        return run_engine(url, query, limit)
    try:
        return _run_sqlite(path, query, limit)
    except Exception as exc:
        if from_driver(exc):
            raise refusal(exc) from exc
        raise


def _run_sqlite(path: Path, query: str, limit: int) -> QueryResult:
    connection = open_readonly(path)
    try:
        return execute(connection, query, limit)
    finally:
        connection.close()


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
