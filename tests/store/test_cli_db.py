"""``tooltray db upgrade|current`` and ``tooltray history`` through click's CliRunner."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tooltray.memory.cli.main import cli
from tooltray.memory.store import Store
from tooltray.memory.store.migrate import head
from tooltray.memory.store.records import Changes, HistoryEvent, Load, TurnRecord, Unload, Use


def test_db_upgrade_creates_then_reports_current(db_url: str) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["db", "upgrade", "--db", db_url])
    assert out.exit_code == 0, out.output
    assert f"upgraded from empty to {head()}" in out.output
    out = runner.invoke(cli, ["db", "upgrade", "--db", db_url])
    assert f"already at {head()}" in out.output
    out = runner.invoke(cli, ["db", "current", "--db", db_url, "--format", "json"])
    row = json.loads(out.output)[0]
    assert (row["revision"], row["head"], row["status"]) == (head(), head(), "up to date")


def test_db_commands_use_tooltray_db_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "env.db"
    monkeypatch.setenv("TOOLTRAY_DB", str(path))
    out = CliRunner().invoke(cli, ["db", "upgrade"])
    assert out.exit_code == 0, out.output
    assert path.is_file()


def _session(url: str) -> None:
    with Store(url) as store:
        store.apply(
            "chat-1",
            Changes(
                turn=1,
                loads=[Load("search", "core", 1), Load("weather", "semantic", 1, 0.71)],
                events=[
                    HistoryEvent("chat-1", 1, "selected", "weather", "semantic", 0.71, "hybrid")
                ],
                turn_record=TurnRecord("chat-1", 1, "0123456789abcdef" * 4, 420, 2),
            ),
        )
        store.apply(
            "chat-1",
            Changes(
                turn=2,
                uses=[Use("weather", 2)],
                unloads=[Unload("search", "evicted")],
                turn_record=TurnRecord("chat-1", 2, "fedcba9876543210" * 4, 300, 1),
            ),
        )


def test_history_shows_the_timeline_turn_by_turn(db_url: str) -> None:
    _session(db_url)
    runner = CliRunner()
    out = runner.invoke(cli, ["history", "chat-1", "--db", db_url, "--format", "csv"])
    assert out.exit_code == 0, out.output
    rows = list(csv.DictReader(io.StringIO(out.output)))
    timeline = [(r["turn"], r["kind"], r["tool"], r["prefix"], r["tool_tokens"]) for r in rows]
    assert timeline == [
        ("1", "loaded", "search", "0123456789ab", "420"),
        ("1", "loaded", "weather", "0123456789ab", "420"),
        ("1", "selected", "weather", "0123456789ab", "420"),
        ("2", "evicted", "search", "fedcba987654", "300"),
        ("2", "used", "weather", "fedcba987654", "300"),
    ]
    out = runner.invoke(cli, ["history", "chat-1", "--db", db_url, "--format", "json"])
    records = json.loads(out.output)
    assert records[2]["detail"] == "hybrid" and records[1]["score"] == pytest.approx(0.71)
    out = runner.invoke(cli, ["history", "chat-1", "--db", db_url])
    assert out.exit_code == 0 and "session chat-1" in out.output and "evicted" in out.output


def test_history_reads_in_an_80_column_terminal(db_url: str) -> None:
    from rich.console import Console

    from tooltray.memory.cli import console

    _session(db_url)
    narrow = Console(width=80, force_terminal=True, color_system=None)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(console, "table_console", lambda: narrow)
        with narrow.capture() as captured:
            out = CliRunner().invoke(cli, ["history", "chat-1", "--db", db_url])
    assert out.exit_code == 0, out.output
    text = captured.get()
    assert max(len(line) for line in text.splitlines()) <= 80
    for header in ("turn", "kind", "tool", "source", "tokens", "loaded"):
        assert header in text, header
    assert "weather" in text and "evicted" in text and "01234567" in text
    assert "uncached" not in text and "reused" not in text  # never filled here: not shown


def test_history_of_unknown_session_or_missing_database_fails_clearly(
    sqlite_url: str, tmp_path: Path
) -> None:
    _session(sqlite_url)
    runner = CliRunner()
    out = runner.invoke(cli, ["history", "nope", "--db", sqlite_url])
    assert out.exit_code != 0 and "no session 'nope'" in out.output
    missing = tmp_path / "missing.db"
    out = runner.invoke(cli, ["history", "chat-1", "--db", str(missing)])
    assert out.exit_code != 0 and "no tooltray database" in out.output
    assert not missing.exists()
