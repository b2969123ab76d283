"""Ad-hoc SQL over the store on a read-only connection (``tooltray sql``): one statement per call,
in a read-only transaction that is always rolled back.

SQLite is opened read-only with an authorizer (no writes, DDL, ATTACH or PRAGMA changes), with
the stdlib only (:func:`~tooltray.memory.cli.sqlconsole.guard.open_readonly`): this module does
not import SQLAlchemy, so ``tooltray sql`` on a SQLite store starts fast. A URL the plain reader of
:mod:`tooltray.memory.store.url` leaves alone, and PostgreSQL, run in
:mod:`tooltray.memory.cli.sqlconsole.sql_pg`.

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
from typing import Any

from tooltray.memory.cli.sqlconsole.guard import open_readonly
from tooltray.memory.cli.sqlconsole.limits import DEFAULT_MAX_BYTES, DEFAULT_SECONDS, Limits
from tooltray.memory.cli.sqlconsole.statement import DEFAULT_LIMIT as DEFAULT_LIMIT  # re-exported
from tooltray.memory.cli.sqlconsole.statement import READER_ROLE as READER_ROLE
from tooltray.memory.cli.sqlconsole.statement import QueryResult as QueryResult
from tooltray.memory.cli.sqlconsole.statement import bounded_sqlite, from_driver, refusal
from tooltray.memory.store.url import plain_sqlite_path, resolve_url
from tooltray.tools.errors import StoreError

ENV_SQL_URL = "TOOLTRAY_SQL_URL"


def resolve_sql_url(sql_url: str | None = None, db: str | None = None) -> str:
    """The URL ``tooltray sql`` reads: ``--sql-url``, else ``TOOLTRAY_SQL_URL``, else the db."""
    return resolve_url(sql_url or os.environ.get(ENV_SQL_URL) or db)


def run_readonly(
    url: str,
    query: str,
    limit: int = DEFAULT_LIMIT,
    *,
    seconds: float = DEFAULT_SECONDS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> QueryResult:
    """Run one statement on a read-only, unprivileged connection, within bounds.

    At most ``limit`` rows, ``seconds`` of running and ``max_bytes`` of output
    (:mod:`tooltray.memory.cli.sqlconsole.limits`); Ctrl-C stops it.

    Raises:
        StoreError: the statement failed, tried to change something, passed a bound, or no
            unprivileged connection could be had (one clear line).
    """
    if not query.strip():
        raise StoreError("empty query: pass one SQL statement, e.g. 'SELECT * FROM sessions'")
    limits = Limits(rows=limit, seconds=seconds, max_bytes=max_bytes)
    path = plain_sqlite_path(url)
    if path is None:
        from tooltray.memory.cli.sqlconsole.sql_pg import run_engine

        return run_engine(url, query, limits)
    try:
        connection = open_readonly(path)
    except Exception as exc:
        if from_driver(exc):
            raise refusal(exc) from exc
        raise
    return run_sqlite(connection, query, limits)


def run_sqlite(connection: Any, query: str, limits: Limits) -> QueryResult:
    """Run ``query`` on a read-only SQLite ``connection`` within ``limits``; close it after."""
    try:
        return bounded_sqlite(connection, query, limits)
    finally:
        connection.close()
