"""``tooltray sql`` runs on a read-only connection: SELECT works, nothing else changes anything."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from tooltray.memory.cli.main import cli
from tooltray.memory.cli.sqlconsole.sql import resolve_sql_url, run_readonly
from tooltray.memory.store import Store
from tooltray.memory.store.records import Changes, Load, Use
from tooltray.tools.errors import StoreError

TABLES = ("sessions", "loaded_tools", "history", "turns", "embeddings", "results", "tooltray_meta")

REFUSED = [
    "INSERT INTO sessions (id, turn, status, meta, created_at, updated_at) "
    "VALUES ('evil', 0, 'x', '{}', '2020-01-01', '2020-01-01')",
    "UPDATE loaded_tools SET position = 99",
    "DELETE FROM history",
    "DROP TABLE history",
    "CREATE TABLE evil (x INTEGER)",
    "CREATE INDEX evil ON history (tool)",
    "ALTER TABLE sessions ADD COLUMN evil INTEGER",
    "SELECT 1; DELETE FROM history",
]
SQLITE_ONLY = ["PRAGMA journal_mode=DELETE", "PRAGMA user_version=7", "PRAGMA query_only=OFF"]


def _fill(url: str) -> None:
    with Store(url) as store:
        store.apply("s1", Changes(turn=1, loads=[Load("a", "core", 1), Load("b", "semantic", 1)]))
        store.apply("s1", Changes(turn=2, uses=[Use("a", 2)]))


def _dump(url: str) -> dict[str, list[tuple[object, ...]]]:
    return {t: sorted(map(repr, run_readonly(url, f"SELECT * FROM {t}").rows)) for t in TABLES}  # type: ignore[misc]


def test_select_works_and_everything_else_is_refused(db_url: str, tmp_path: Path) -> None:
    _fill(db_url)
    before = _dump(db_url)
    sqlite_file = db_url.startswith("sqlite")
    raw = Path(db_url.removeprefix("sqlite:///")).read_bytes() if sqlite_file else b""
    result = run_readonly(db_url, "SELECT name, position FROM loaded_tools ORDER BY position")
    assert result.columns == ["name", "position"] and result.rows == [("a", 0), ("b", 1)]
    statements = REFUSED + (SQLITE_ONLY if sqlite_file else [])
    if sqlite_file:
        statements.append(f"ATTACH DATABASE '{tmp_path / 'new.db'}' AS other")
    for statement in statements:
        with pytest.raises(StoreError, match="query (refused|failed)") as info:
            run_readonly(db_url, statement)
        assert "\n" not in str(info.value), statement
    assert _dump(db_url) == before
    if sqlite_file:
        assert Path(db_url.removeprefix("sqlite:///")).read_bytes() == raw
        assert not (tmp_path / "new.db").exists()


def test_writes_are_named_as_read_only_refusals(db_url: str) -> None:
    _fill(db_url)
    with pytest.raises(StoreError, match="query refused: .* read-only"):
        run_readonly(db_url, "DELETE FROM history")


def test_limit_truncates(sqlite_url: str) -> None:
    _fill(sqlite_url)
    result = run_readonly(sqlite_url, "SELECT * FROM history", limit=1)
    assert len(result.rows) == 1 and result.truncated


def test_sql_url_comes_from_option_then_env_then_db(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLTRAY_SQL_URL", raising=False)
    assert resolve_sql_url(None, "sqlite:////a.db") == "sqlite:////a.db"
    monkeypatch.setenv("TOOLTRAY_SQL_URL", "postgresql://reader@h/d")
    assert resolve_sql_url(None, "sqlite:////a.db") == "postgresql+psycopg://reader@h/d"
    assert resolve_sql_url("sqlite:////b.db", "sqlite:////a.db") == "sqlite:////b.db"


def test_cli_sql_formats_and_errors(db_url: str) -> None:
    _fill(db_url)
    runner = CliRunner()
    query = "SELECT name, position FROM loaded_tools ORDER BY position"
    out = runner.invoke(cli, ["sql", query, "--db", db_url, "--format", "json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output) == [{"name": "a", "position": 0}, {"name": "b", "position": 1}]
    out = runner.invoke(cli, ["sql", query, "--db", db_url, "--format", "csv"])
    assert out.output.splitlines() == ["name,position", "a,0", "b,1"]
    out = runner.invoke(cli, ["sql", query, "--db", db_url])
    assert out.exit_code == 0 and "position" in out.output and "│ b" in out.output
    out = runner.invoke(cli, ["sql", "DROP TABLE sessions", "--db", db_url])
    assert out.exit_code != 0
    assert out.output.count("\n") == 1 and out.output.startswith("error: query refused")
    assert run_readonly(db_url, "SELECT count(*) FROM sessions").rows == [(1,)]


def test_postgres_read_only_role_through_sql_url(pg_url: str) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    _fill(pg_url)
    role = f"reader_{uuid.uuid4().hex[:8]}"
    owner = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with owner.connect() as conn:
        conn.execute(text(f"CREATE ROLE {role} LOGIN"))
        conn.execute(text(f"GRANT USAGE ON SCHEMA public TO {role}"))
        conn.execute(text(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}"))
    reader_url = make_url(pg_url).set(username=role).render_as_string(hide_password=False)
    try:
        runner = CliRunner()
        args = ["--db", "sqlite:////nonexistent.db", "--sql-url", reader_url, "--format", "csv"]
        out = runner.invoke(cli, ["sql", "SELECT id FROM sessions", *args])
        assert out.exit_code == 0, out.output
        assert out.output.splitlines() == ["id", "s1"]
        out = runner.invoke(cli, ["sql", "DELETE FROM history", *args])
        assert out.exit_code != 0 and "read-only" in out.output
    finally:
        with owner.connect() as conn:
            conn.execute(text(f"DROP OWNED BY {role}"))
            conn.execute(text(f"DROP ROLE {role}"))
        owner.dispose()
