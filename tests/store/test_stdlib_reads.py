"""The stdlib read path of ``sql``, ``history`` and ``db current`` answers as SQLAlchemy's does.

On a plain SQLite URL these commands read the file with ``sqlite3`` (see
:mod:`tooltray.memory.store.url`); every test here runs both paths on the same real store (made
by the real migrations) and compares what they return, print or refuse.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from tooltray.memory.cli import db as db_cli
from tooltray.memory.cli.main import cli
from tooltray.memory.cli.sqlconsole.limits import Limits
from tooltray.memory.cli.sqlconsole.sql import run_readonly
from tooltray.memory.cli.sqlconsole.sql_pg import run_engine
from tooltray.memory.store import engine
from tooltray.memory.store.migrate import head
from tooltray.memory.store.records import Changes, HistoryEvent, Load, TurnRecord, Unload, Use
from tooltray.memory.store.store import Store
from tooltray.memory.store.url import display_url, plain_sqlite_path, sqlite_file
from tooltray.memory.store.versions import chain
from tooltray.tools.errors import StoreError

SESSION = "chat-1"
QUERIES = [
    "SELECT * FROM history ORDER BY id",
    "SELECT * FROM turns",
    "SELECT * FROM sessions",
    "SELECT name FROM loaded_tools WHERE name REGEXP '^we'",
    "SELECT floor(2.5) AS f, x'00ff' AS b, NULL AS n",
    "PRAGMA table_info(history)",
]
REFUSED = [
    "DELETE FROM history",
    "SELECT 1; SELECT 2",
    "SELEC nonsense",
    "SELECT * FROM nope",
    "PRAGMA journal_mode=DELETE",
]


@pytest.fixture
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose path the plain URL reader understands (tmp_path may hold brackets)."""
    return tmp_path_factory.mktemp("plain")


@pytest.fixture
def url(folder: Path) -> str:
    """A real store at head holding a session with history, turns and an explicit timestamp."""
    url = f"sqlite:///{folder / 'tooltray.db'}"
    at = datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
    first = Changes(
        turn=1,
        loads=[Load("search", "core", 1), Load("weather", "semantic", 1, 0.71)],
        events=[HistoryEvent(SESSION, 1, "selected", "weather", "semantic", 0.71, 'a "b",\nc')],
        turn_record=TurnRecord(SESSION, 1, "0123456789abcdef" * 4, 420, 2, eager_tokens=999),
    )
    second = Changes(
        turn=3,
        uses=[Use("weather", 2)],
        unloads=[Unload("search", "evicted")],
        events=[HistoryEvent(SESSION, 2, "used", at=at)],
        turn_record=TurnRecord(SESSION, 3, "fedcba9876543210" * 4, 300, 1),
    )
    with Store(url) as store:
        store.apply(SESSION, first)
        store.apply(SESSION, second)
    assert plain_sqlite_path(url) is not None
    return url


def printed(fn: Callable[[], None], capsys: pytest.CaptureFixture[str]) -> str:
    fn()
    return capsys.readouterr().out


PLAIN = [
    "sqlite:///a.db",
    "sqlite:////abs/a b.db",
    "sqlite+pysqlite:///x/y-z_1.db",
    "sqlite:///~/x.db",
]
OTHER = [
    "sqlite://",
    "sqlite:///:memory:",
    "sqlite:///a.db?mode=ro",
    "sqlite:///a%20b.db",
    "sqlite:///caf\u00e9.db",
    "sqlite:///a#b.db",
    "sqlite+aiosqlite:///a.db",
    "postgresql+psycopg://user:secret@host/db",
]


@pytest.mark.parametrize("url", PLAIN)
def test_plain_urls_read_as_sqlalchemy_reads_them(url: str) -> None:
    assert plain_sqlite_path(url) == engine.sqlite_path(url)
    assert display_url(url) == make_url(url).render_as_string(hide_password=True)


@pytest.mark.parametrize("url", OTHER)
def test_other_urls_are_left_to_sqlalchemy(url: str) -> None:
    assert plain_sqlite_path(url) is None
    assert sqlite_file(url) == engine.sqlite_path(url)
    assert display_url(url) == make_url(url).render_as_string(hide_password=True)
    assert "secret" not in display_url(url)


def test_sql_answers_and_refusals_match_the_engine_path(url: str) -> None:
    for query in QUERIES:
        fast = run_readonly(url, query, limit=2)
        assert fast == run_engine(url, query, Limits(rows=2)), query
        assert fast.columns, query
    for query in REFUSED:
        with pytest.raises(StoreError) as fast_error:
            run_readonly(url, query)
        with pytest.raises(StoreError) as engine_error:
            run_engine(url, query, Limits(rows=10))
        assert str(fast_error.value) == str(engine_error.value), query
        assert "\n" not in str(fast_error.value)


def test_history_records_match_the_store(url: str) -> None:
    path = plain_sqlite_path(url)
    assert path is not None
    fast = db_cli.file_timeline(url, path, SESSION)
    stored = db_cli.stored_timeline(url, SESSION)
    assert fast is not None and fast == stored
    events, turns = fast
    assert len(events) == 6 and len(turns) == 2
    assert all(e.at is not None and e.at.tzinfo == timezone.utc for e in events)
    assert events[-1].at == datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)
    assert db_cli.file_timeline(url, path, "nope") is None
    assert db_cli.stored_timeline(url, "nope") is None


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_history_output_is_byte_identical(
    url: str, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    stored = db_cli.stored_timeline(url, SESSION)
    assert stored is not None
    rows = db_cli._timeline(*stored)
    expected = printed(lambda: db_cli.emit(db_cli.HISTORY_COLUMNS, rows, fmt), capsys)
    out = CliRunner().invoke(cli, ["history", SESSION, "--db", url, "--format", fmt])
    assert out.exit_code == 0, out.output
    assert out.output == expected
    assert "2024-01-02T03:04:05.678901+00:00" not in out.output  # `at` is not a column
    assert "fedcba987654" in out.output and "999" not in out.output


def alembic_row(url: str) -> list[str]:
    """``db current``'s row as SQLAlchemy and Alembic themselves read the database."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    from tooltray.memory.store.migrate import alembic_config

    sa = create_engine(url)
    with sa.connect() as conn:
        revision = MigrationContext.configure(conn).get_current_revision()
    sa.dispose()
    want = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
    assert want is not None
    shown = make_url(url).render_as_string(hide_password=True)
    status = "up to date" if revision == want else "needs `tooltray db upgrade`"
    return [shown, revision or "", want, status]


@pytest.mark.parametrize("older", [False, True])
def test_db_current_matches_alembic(url: str, older: bool) -> None:
    if older:
        with sqlite3.connect(str(plain_sqlite_path(url))) as conn:
            conn.execute("UPDATE alembic_version SET version_num = ?", (chain()[head()],))
    expected = alembic_row(url)
    runner = CliRunner()
    out = runner.invoke(cli, ["db", "current", "--db", url, "--format", "json"])
    assert out.exit_code == 0, out.output
    columns = ["database", "revision", "head", "status"]
    assert json.loads(out.output) == [dict(zip(columns, expected, strict=True))]
    out = runner.invoke(cli, ["db", "current", "--db", url, "--format", "csv"])
    assert out.output == ",".join(columns) + "\n" + ",".join(expected) + "\n"


def damage(url: str, how: str) -> None:
    """Make the store at ``url`` one the store refuses: older, newer, foreign or damaged."""
    path = Path(str(plain_sqlite_path(url)))
    if how in ("older", "newer"):
        revision = chain()[head()] if how == "older" else "ffff9999"
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE alembic_version SET version_num = ?", (revision,))
    elif how == "foreign":
        path.unlink()
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE invoices (id INTEGER)")
    else:
        path.write_bytes(path.read_bytes()[:100] + b"\x00" * 4000)


@pytest.mark.parametrize("how", ["older", "newer", "foreign", "damaged"])
def test_refusals_are_the_stores_own_line(url: str, how: str) -> None:
    damage(url, how)
    path = plain_sqlite_path(url)
    assert path is not None
    with pytest.raises(StoreError) as fast:
        db_cli.file_timeline(url, path, SESSION)
    with pytest.raises(StoreError) as stored:
        db_cli.stored_timeline(url, SESSION)
    assert type(fast.value) is type(stored.value)
    assert str(fast.value) == str(stored.value)
    for args in (["history", SESSION], ["db", "current"]):
        out = CliRunner().invoke(cli, [*args, "--db", url, "--format", "csv"])
        if how in ("older", "newer") and args[0] == "db":
            assert out.exit_code == 0 and "needs `tooltray db upgrade`" in out.output
            continue
        assert out.exit_code == 2, out.output
        assert out.output == f"error: {fast.value}\n"


def test_a_missing_store_or_folder_is_one_line(folder: Path) -> None:
    runner = CliRunner()
    missing = f"sqlite:///{folder / 'none.db'}"
    out = runner.invoke(cli, ["history", SESSION, "--db", missing])
    assert out.output.startswith(
        f"error: no tooltray database at {missing}: check --db / TOOLTRAY_DB"
    )
    assert "`tooltray db upgrade`" in out.output and out.output.count("\n") == 1
    out = runner.invoke(cli, ["sql", "SELECT 1", "--db", missing])
    assert (
        out.output
        == f"error: no database file at {folder / 'none.db'}: check --db (nothing to read)\n"
    )
    nowhere = folder / "nowhere"
    out = runner.invoke(cli, ["db", "current", "--db", f"sqlite:///{nowhere / 'x.db'}"])
    assert out.exit_code == 2 and out.output.startswith(f"error: the folder {nowhere} ")
    assert not nowhere.exists() and not (folder / "none.db").exists()


def test_a_url_only_sqlalchemy_reads_takes_the_old_path_and_answers_the_same(
    url: str, folder: Path
) -> None:
    odd = folder / "caf\u00e9"
    odd.mkdir()
    shutil.copy(str(plain_sqlite_path(url)), odd / "tooltray.db")
    other = f"sqlite:///{odd / 'tooltray.db'}"
    assert plain_sqlite_path(other) is None
    for query in QUERIES:
        assert run_readonly(other, query) == run_readonly(url, query), query
    assert db_cli.stored_timeline(other, SESSION) == db_cli.stored_timeline(url, SESSION)
