"""``tooltray sql`` through SQLAlchemy: PostgreSQL, and SQLite URLs only SQLAlchemy can read.

How a PostgreSQL statement is kept from a powerful session is told in
:mod:`tooltray.memory.cli.sqlconsole.sql`, which runs plain SQLite files without this module.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import create_engine
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from tooltray.memory.cli.sqlconsole.limits import Limits, Stop, cancellable
from tooltray.memory.cli.sqlconsole.readonly import readonly_engine
from tooltray.memory.cli.sqlconsole.statement import (
    READER_ROLE,
    QueryResult,
    bounded_sqlite,
    execute,
    from_driver,
    refusal,
    result_of,
)
from tooltray.memory.store.engine import is_sqlite
from tooltray.memory.store.probe import TABLES, VERSION_TABLE, first_line
from tooltray.tools.errors import StoreError

POWERFUL_ROLES = (
    "pg_execute_server_program",
    "pg_read_server_files",
    "pg_write_server_files",
    "pg_signal_backend",
    "pg_write_all_data",
    "pg_checkpoint",
    "pg_create_subscription",
    "pg_signal_autovacuum_worker",
    "pg_use_reserved_connections",
)
LOGIN_ATTEMPTS = 3
_SYNTAX_ERROR = "42601"  # DECLARE ... CURSOR FOR takes a query only: run anything else plainly
_CANCELED = "57014"  # query_canceled: statement_timeout, or the cancel psycopg sends on Ctrl-C
_LOCK_KEY = 0x7461_7900  # pg_advisory_lock key while the reader may log in
_FIX = "pass --sql-url (or TOOLTRAY_SQL_URL) for a role that can only SELECT"
_POWERS_SQL = """
SELECT r.rolname, r.rolsuper, r.rolcreaterole, r.rolreplication,
       r.rolname = ANY(%(powerful)s), r.rolname = session_user
FROM pg_roles r
WHERE pg_has_role(session_user, r.oid, 'MEMBER')
"""
_TABLES_SQL = """
SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = ANY(%(tables)s) AND c.relkind IN ('r', 'p', 'v') AND pg_table_is_visible(c.oid)
"""


def run_engine(url: str, query: str, limits: Limits) -> QueryResult:
    """:func:`~tooltray.memory.cli.sqlconsole.sql.run_readonly` for any URL SQLAlchemy reads."""
    try:
        if is_sqlite(url):
            with _readonly(url) as raw:
                return bounded_sqlite(raw, query, limits)
        return _run_postgres(url, query, limits)
    except StoreError:
        raise
    except (SQLAlchemyError, DBAPIError) as exc:
        raise refusal(exc) from exc
    except Exception as exc:
        if from_driver(exc):
            raise refusal(exc) from exc
        raise


@contextmanager
def _readonly(url: str) -> Iterator[Any]:
    """A driver connection on :func:`readonly_engine`, rolled back and closed afterwards."""
    engine = readonly_engine(url)
    try:
        with engine.connect() as conn:
            raw: Any = conn.connection.driver_connection
            try:
                yield raw
            finally:
                raw.rollback()
    finally:
        engine.dispose()


def _run_postgres(url: str, query: str, limits: Limits) -> QueryResult:
    with _readonly(url) as raw:
        powers = _begin(raw)
        if not powers:
            return bounded_postgres(raw, query, limits)
    with _reader_connection(url, powers) as reader:
        left = _begin(reader, strict=True)
        if left:
            raise StoreError(
                f"tooltray sql will not use its role {READER_ROLE}: it {_summary(left)} "
                f"(someone widened it); revoke that, or {_FIX}"
            )
        return bounded_postgres(reader, query, limits)


def bounded_postgres(raw: Any, query: str, limits: Limits) -> QueryResult:
    """Run ``query`` in the open read-only transaction of ``raw`` within ``limits``.

    ``statement_timeout`` bounds each round trip and a server-side cursor hands rows over in
    batches, so neither a long statement nor a huge result reaches the client whole. A cursor
    takes only a query (SELECT, VALUES, TABLE, WITH); anything else (SHOW, EXPLAIN) runs as a
    prepared statement instead, still under the timeout.
    """
    stop = Stop(time.monotonic() + limits.seconds, limits=limits)
    return cancellable(lambda: _bounded(raw, query, stop), raw.cancel_safe, stop)


def _bounded(raw: Any, query: str, stop: Stop) -> QueryResult:
    limits = stop.limits
    with raw.cursor() as cursor:
        cursor.execute(f"SET LOCAL statement_timeout = {max(int(limits.seconds * 1000), 1)}")
        cursor.execute("SAVEPOINT tooltray_sql")
    try:
        try:
            with raw.cursor(name="tooltray_sql") as named:
                named.execute(query)
                return result_of(named, stop)
        except Exception as exc:
            if getattr(exc, "sqlstate", None) != _SYNTAX_ERROR:
                raise
        with raw.cursor() as cursor:
            cursor.execute("ROLLBACK TO SAVEPOINT tooltray_sql")
        return execute(raw, query, stop, prepare=True)
    except Exception as exc:
        if getattr(exc, "sqlstate", None) != _CANCELED:
            raise
        stop.reason = stop.reason or ("time" if "timeout" in str(exc) else "interrupt")
        raise stop.error() from exc


def _begin(raw: Any, *, strict: bool = False) -> list[str]:
    """Start the read-only transaction; return what makes the session user powerful.

    ``strict`` (for tooltray's reader) also counts membership in any other role, since a member
    can ``SET ROLE`` to it and act with its rights (signal its sessions, for one).
    """
    with raw.cursor() as cursor:
        cursor.execute("SET TRANSACTION READ ONLY")
        cursor.execute(_POWERS_SQL, {"powerful": list(POWERFUL_ROLES)})
        return _powers(cursor.fetchall(), strict=strict)


def _summary(powers: list[str], most: int = 3) -> str:
    more = f" (and {len(powers) - most} more)" if len(powers) > most else ""
    return "; ".join(powers[:most]) + more


def _powers(rows: list[tuple[Any, ...]], *, strict: bool) -> list[str]:
    found: list[str] = []
    for name, superuser, createrole, replication, predefined, itself in rows:
        via = "is" if itself else f"can SET ROLE to {name!r}, which is"
        if superuser:
            found.append(f"{via} a superuser")
        if createrole:
            found.append(f"{via} allowed to create roles")
        if replication:
            found.append(f"{via} a replication role")
        if predefined:
            found.append(f"is a member of {name}")
        elif strict and not itself and not (superuser or createrole or replication):
            found.append(f"is a member of {name!r}")
    return found


@contextmanager
def _reader_connection(url: str, powers: list[str]) -> Iterator[Any]:
    """A read-only connection as :data:`READER_ROLE`, prepared through the powerful ``url``."""
    admin = create_engine(make_url(url), poolclass=NullPool, isolation_level="AUTOCOMMIT")
    reader: Engine | None = None
    try:
        with admin.connect() as conn:
            driver: Any = conn.connection.driver_connection
            cursor = driver.cursor()
            with _setting_up():
                _prepare(cursor, powers)
                reader, session = _log_in(cursor, url)
        with session:
            raw: Any = session.connection.driver_connection
            try:
                yield raw
            finally:
                raw.rollback()
    finally:
        admin.dispose()
        if reader is not None:
            reader.dispose()


def _log_in(cursor: Any, url: str) -> tuple[Engine, Any]:
    """Let the reader log in once with a fresh password, connect, and lock it again."""
    cursor.execute("SET lock_timeout = '20s'")
    cursor.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
    try:
        for attempt in range(1, LOGIN_ATTEMPTS + 1):
            password = secrets.token_urlsafe(32)
            _allow_login(cursor, password)
            target = make_url(url).set(username=READER_ROLE, password=password)
            engine = readonly_engine(target.render_as_string(hide_password=False))
            try:
                return engine, engine.connect()
            except SQLAlchemyError as exc:
                engine.dispose()
                raced = any(h in first_line(exc) for h in ("password", "not permitted"))
                if attempt == LOGIN_ATTEMPTS or not raced:  # a concurrent call reset it
                    raise StoreError(
                        f"tooltray sql could not log in as its read-only role {READER_ROLE} "
                        f"({first_line(exc)}): let it log in with a password in pg_hba.conf, "
                        f"or {_FIX}"
                    ) from None
        raise AssertionError("unreachable")  # pragma: no cover
    finally:
        cursor.execute(_alter("NOLOGIN PASSWORD NULL"))
        cursor.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))


@contextmanager
def _setting_up() -> Iterator[None]:
    """Database errors while preparing the reader say so (not "query failed"), with the fix."""
    try:
        yield
    except StoreError:
        raise
    except Exception as exc:
        if not isinstance(exc, (SQLAlchemyError, DBAPIError)) and not from_driver(exc):
            raise
        raise StoreError(
            f"tooltray sql could not prepare its read-only role {READER_ROLE} "
            f"({first_line(exc)}): {_FIX}"
        ) from None


def _prepare(cursor: Any, powers: list[str]) -> None:
    """Create or repair the reader role and grant it SELECT on the store's tables only."""
    cursor.execute("SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user")
    row = cursor.fetchone()
    if not row or not row[0]:
        raise StoreError(
            f"tooltray sql will not run a statement as this PostgreSQL role, which "
            f"{_summary(powers)}, and the role cannot create a read-only one: {_FIX}"
        )
    _ensure_role(cursor)
    _grant_tables(cursor)


def _ensure_role(cursor: Any) -> None:
    from psycopg import errors, sql

    cursor.execute(
        "SELECT rolsuper OR rolcreaterole OR rolcreatedb OR rolreplication OR rolbypassrls "
        "OR rolinherit FROM pg_roles WHERE rolname = %s",
        (READER_ROLE,),
    )
    row = cursor.fetchone()
    if row is None:
        try:
            cursor.execute(sql.SQL("CREATE ROLE {} NOLOGIN NOINHERIT").format(_name()))
        except errors.DuplicateObject:  # another database of the cluster just made it
            row = (True,)
    if row is not None and row[0]:
        cursor.execute(
            _alter("NOSUPERUSER NOCREATEROLE NOCREATEDB NOREPLICATION NOBYPASSRLS NOINHERIT")
        )
    cursor.execute(
        "SELECT r.rolname FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid "
        "WHERE m.member = (SELECT oid FROM pg_roles WHERE rolname = %s)",
        (READER_ROLE,),
    )
    for (granted,) in cursor.fetchall():
        cursor.execute(sql.SQL("REVOKE {} FROM {}").format(sql.Identifier(granted), _name()))


def _grant_tables(cursor: Any) -> None:
    from psycopg import sql

    cursor.execute("SELECT current_database()")
    database = cursor.fetchone()[0]
    cursor.execute(
        sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(database), _name())
    )
    cursor.execute(_TABLES_SQL, {"tables": [*TABLES, VERSION_TABLE]})
    found = cursor.fetchall()
    for schema in sorted({s for s, _ in found}):
        cursor.execute(
            sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(schema), _name())
        )
    for schema, table in found:
        cursor.execute(
            sql.SQL("GRANT SELECT ON {} TO {}").format(sql.Identifier(schema, table), _name())
        )


def _allow_login(cursor: Any, password: str) -> None:
    from psycopg import sql

    cursor.execute("SELECT (now() + interval '5 minutes')::text")
    until = cursor.fetchone()[0]
    cursor.execute(
        sql.SQL("ALTER ROLE {} LOGIN PASSWORD {} VALID UNTIL {}").format(
            _name(), sql.Literal(password), sql.Literal(until)
        )
    )


def _name() -> Any:
    from psycopg import sql

    return sql.Identifier(READER_ROLE)


def _alter(attributes: str) -> Any:
    from psycopg import sql

    return sql.SQL("ALTER ROLE {} " + attributes).format(_name())
