"""``tooltray sql`` cannot write, attach or alter anything, on SQLite and on PostgreSQL.

Every attempt here is first shown to succeed on an ordinary writable connection (so a refusal is
the read-only connection's doing, not a typo), then run through ``tooltray sql``: it must fail
with one clear line, and the database, its files and the server must be exactly as before.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import reliability_support as rs
from click.testing import CliRunner
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from tooltray.memory.cli.main import cli
from tooltray.memory.cli.sqlconsole.sql import READER_ROLE, run_readonly
from tooltray.memory.store import Store
from tooltray.memory.store.records import Changes, Load, Use
from tooltray.tools.errors import StoreError

TABLES = ("sessions", "loaded_tools", "history", "turns", "embeddings", "results", "tooltray_meta")


def fill(url: str) -> None:
    with Store(url) as store:
        store.apply("s1", Changes(turn=1, loads=[Load("a", "core", 1), Load("b", "semantic", 1)]))
        store.apply("s1", Changes(turn=2, uses=[Use("a", 2)]))


def sqlite_attempts(folder: Path) -> list[str]:
    return [
        "INSERT INTO history (session_id, turn, kind, at) "
        "VALUES ('s1', 9, 'evil', CURRENT_TIMESTAMP)",
        "REPLACE INTO tooltray_meta (key, value) VALUES ('written_by', 'evil')",
        "WITH x AS (SELECT 1) UPDATE sessions SET turn = 99",
        "DELETE FROM loaded_tools",
        "DROP TABLE history",
        "CREATE TABLE evil (x)",
        "CREATE VIEW evil AS SELECT 1",
        "CREATE TRIGGER evil AFTER INSERT ON history BEGIN DELETE FROM sessions; END",
        "ALTER TABLE sessions RENAME TO gone",
        "CREATE INDEX evil ON history (detail)",
        f"ATTACH DATABASE '{folder / 'attached.db'}' AS other",
        f"VACUUM INTO '{folder / 'copy.db'}'",
        "VACUUM",
        "REINDEX",
        "ANALYZE",
        "PRAGMA user_version = 7",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA writable_schema = ON",
        "PRAGMA query_only = OFF",
        "PRAGMA wal_checkpoint(TRUNCATE)",
        "PRAGMA optimize",
    ]


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def dump(url: str) -> dict[str, list[str]]:
    return {t: sorted(map(repr, run_readonly(url, f"SELECT * FROM {t}").rows)) for t in TABLES}


def test_sqlite_attempts_that_would_succeed_are_refused(
    tmp_path: Path, figures: dict[str, Any]
) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    url = f"sqlite:///{folder / 'tooltray.db'}"
    fill(url)
    attempts = sqlite_attempts(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").mkdir()
    for attempt in attempts:  # each works on an ordinary connection to a copy
        scratch = tmp_path / "scratch.db"
        scratch.write_bytes((folder / "tooltray.db").read_bytes())
        conn = sqlite3.connect(scratch, isolation_level=None)
        conn.execute(attempt)
        conn.close()
        scratch.unlink()
    for extra in (tmp_path / "elsewhere").iterdir():
        extra.unlink()
    before, raw = dump(url), files(folder)
    runner = CliRunner()
    refused = 0
    for attempt in attempts:
        with pytest.raises(StoreError, match=r"^query (refused|failed): ") as info:
            run_readonly(url, attempt)
        assert "\n" not in str(info.value)
        out = runner.invoke(cli, ["sql", attempt, "--db", url])
        assert out.exit_code != 0 and out.output.startswith("error: query ")
        refused += 1
    assert files(folder) == raw
    assert dump(url) == before
    assert not list((tmp_path / "elsewhere").iterdir())
    figures["sql_sqlite"] = {"attempts": len(attempts), "refused": refused, "changed": 0}


@pytest.fixture
def reader(pg_url: str) -> Iterator[tuple[str, str]]:
    """(owner URL, URL of a role with USAGE + SELECT only) on a fresh filled database."""
    fill(pg_url)
    role = f"reader_{uuid.uuid4().hex[:8]}"
    owner = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with owner.connect() as conn:
        conn.execute(text(f"CREATE ROLE {role} LOGIN"))
        conn.execute(text(f"GRANT USAGE ON SCHEMA public TO {role}"))
        conn.execute(text(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}"))
    try:
        yield pg_url, make_url(pg_url).set(username=role).render_as_string(hide_password=False)
    finally:
        with owner.connect() as conn:
            conn.execute(text(f"DROP OWNED BY {role}"))
            conn.execute(text(f"DROP ROLE {role}"))
        owner.dispose()


@pytest.fixture
def pg_url() -> Iterator[str]:
    with rs.pg_databases() as fresh:
        yield fresh()


def pg_attempts(marker: Path) -> list[str]:
    """Statements an owner (here a superuser) can run; some change things outside the database."""
    return [
        "INSERT INTO history (session_id, turn, kind, at) "
        "VALUES ('s1', 9, 'evil', CURRENT_TIMESTAMP)",
        "UPDATE sessions SET turn = 99",
        "DELETE FROM loaded_tools",
        "TRUNCATE results",
        "DROP TABLE history CASCADE",
        "CREATE TABLE evil (x int)",
        "ALTER TABLE sessions ADD COLUMN evil int",
        "CREATE TEMP TABLE evil (x int)",
        "SELECT setval('history_id_seq', 10000)",
        "LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE",
        "SELECT * FROM sessions FOR UPDATE",
        f"COPY (SELECT 1) TO '{marker}.copy'",
        f"COPY (SELECT 1) TO PROGRAM 'cat > /dev/null; touch {marker}.program'",
        "SELECT pg_reload_conf()",
        "SELECT pg_stat_reset()",
    ]


def _owner_can(owner_url: str, attempt: str) -> None:
    engine = create_engine(owner_url)
    try:
        with engine.connect() as conn:
            conn.execute(text(attempt))
            conn.rollback()
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_postgres_read_only_role_refuses_what_the_owner_can_do(
    reader: tuple[str, str], tmp_path: Path, figures: dict[str, Any]
) -> None:
    owner_url, reader_url = reader
    marker = Path("/tmp") / f"tooltray-sql-{uuid.uuid4().hex[:8]}"
    attempts = pg_attempts(marker)
    for attempt in attempts:
        _owner_can(owner_url, attempt)
    writer = create_engine(owner_url, poolclass=NullPool).connect()
    pid = writer.execute(text("SELECT pg_backend_pid()")).scalar()
    kill = f"SELECT pg_terminate_backend({pid}) AND pg_sleep(0.2) IS NOT NULL"
    assert Path(f"{marker}.program").exists() and Path(f"{marker}.copy").exists()
    for suffix in (".program", ".copy"):
        _remove_server_file(owner_url, f"{marker}{suffix}")
    before = dump(owner_url)
    runner = CliRunner()
    for attempt in attempts:
        with pytest.raises(StoreError, match=r"^query (refused|failed): "):
            run_readonly(reader_url, attempt)
        out = runner.invoke(cli, ["sql", attempt, "--db", owner_url, "--sql-url", reader_url])
        assert out.exit_code != 0 and out.output.startswith("error: query ")
    with pytest.raises(StoreError, match="permission denied|must be a (member|superuser)"):
        run_readonly(reader_url, kill)
    assert writer.execute(text("SELECT 1")).scalar() == 1  # the writer's session survived
    with pytest.raises(StoreError, match="must be a (member|superuser)|permission denied"):
        run_readonly(owner_url, kill)  # a superuser --db runs the query as pg_read_all_data
    assert writer.execute(text("SELECT 1")).scalar() == 1
    writer.invalidate()
    assert dump(owner_url) == before
    assert not Path(f"{marker}.program").exists() and not Path(f"{marker}.copy").exists()
    figures["sql_postgres_reader_role"] = {
        "attempts": len(attempts) + 1,
        "refused": len(attempts) + 1,
        "changed": 0,
    }


def _dead(conn: Any) -> bool:
    try:
        conn.execute(text("SELECT 1"))
        conn.rollback()
        return False
    except Exception:
        return True


def _remove_server_file(owner_url: str, path: str) -> None:
    """The server wrote it as its own user: remove it the same way (reading the row first: a
    program that exits before the server has written it fails the COPY with a broken pipe)."""
    _owner_can(owner_url, f"COPY (SELECT 1) TO PROGRAM 'cat > /dev/null; rm -f {path}'")


@pytest.mark.postgres
def test_postgres_default_connection_cannot_run_programs_or_write_files(
    pg_url: str, figures: dict[str, Any]
) -> None:
    """Without --sql-url, ``tooltray sql`` uses the --db role; it must not escape the database.

    A read-only transaction stops writes to tables, but not ``COPY ... TO PROGRAM`` (a shell
    command on the server), ``COPY ... TO 'file'`` or ``pg_terminate_backend`` (killing an agent's
    connection) when the role may do them. ``SET ROLE`` to a weaker role is not enough while the
    session user is a superuser: ``set_config('role', ...)`` takes the privileges back inside the
    statement (through ``query_to_xml`` or a ``DO`` block).
    """
    fill(pg_url)
    marker = Path("/tmp") / f"tooltray-sql-{uuid.uuid4().hex[:8]}"
    writer = create_engine(pg_url, poolclass=NullPool).connect()
    pid = writer.execute(text("SELECT pg_backend_pid()")).scalar()
    escaped = []
    back = "SELECT set_config('role', current_setting('session_authorization'), true) AS r"
    attempts = (
        f"COPY (SELECT 1) TO PROGRAM 'touch {marker}.program'",
        f"COPY (SELECT 1) TO '{marker}.copy'",
        f"SELECT pg_terminate_backend({pid})",
        f"{back}, query_to_xml('SELECT pg_terminate_backend({pid})', true, false, '') AS x",
        "DO $$BEGIN PERFORM set_config('role', current_setting('session_authorization'), true);"
        f" EXECUTE 'COPY (SELECT 1) TO PROGRAM ''touch {marker}.do'''; END$$",
    )
    for attempt in attempts:
        try:
            run_readonly(pg_url, attempt)
        except StoreError:
            continue
        if "terminate" not in attempt or _dead(writer):
            escaped.append(attempt)
    for suffix in (".program", ".copy", ".do"):
        Path(f"{marker}{suffix}").unlink(missing_ok=True)
    writer.invalidate()
    figures["sql_postgres_default_role"] = {"attempts": len(attempts), "escaped": len(escaped)}
    assert not escaped, f"tooltray sql ran {escaped} on a read-only connection"


@pytest.mark.postgres
def test_postgres_superuser_queries_run_as_a_locked_reader(pg_url: str) -> None:
    """The statement's session user is tooltray's reader, which can log in only meanwhile."""
    fill(pg_url)
    who = run_readonly(pg_url, "SELECT session_user, current_user, count(*) FROM sessions")
    assert who.rows == [(READER_ROLE, READER_ROLE, 1)]
    engine = create_engine(pg_url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            role = conn.execute(
                text(
                    "SELECT rolcanlogin, rolpassword IS NULL, rolsuper, rolcreaterole, "
                    "rolinherit FROM pg_authid WHERE rolname = :r"
                ),
                {"r": READER_ROLE},
            ).one()
            grants = conn.execute(
                text(
                    "SELECT DISTINCT privilege_type FROM information_schema.role_table_grants "
                    "WHERE grantee = :r AND table_catalog = current_database()"
                ),
                {"r": READER_ROLE},
            ).all()
    finally:
        engine.dispose()
    assert tuple(role) == (False, True, False, False, False)
    assert grants == [("SELECT",)]


@pytest.mark.postgres
def test_postgres_powerful_role_that_cannot_make_a_reader_is_refused(pg_url: str) -> None:
    role = f"signaller_{uuid.uuid4().hex[:8]}"
    owner = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with owner.connect() as conn:
        conn.execute(text(f"CREATE ROLE {role} LOGIN IN ROLE pg_signal_backend"))
    try:
        url = make_url(pg_url).set(username=role).render_as_string(hide_password=False)
        with pytest.raises(StoreError, match="pg_signal_backend.*--sql-url") as info:
            run_readonly(url, "SELECT 1")
        assert "\n" not in str(info.value)
    finally:
        with owner.connect() as conn:
            conn.execute(text(f"DROP ROLE {role}"))
        owner.dispose()
