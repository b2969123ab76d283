"""``sessions``, ``show``, ``explain`` and ``history`` show a session without SQL; ``explain`` is
a dry run that leaves the database file byte for byte as it was."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tooltray.memory.cli.main import cli
from tooltray.memory.store import Store


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store holding demo-1 after 4 turns (turn 4 escapes with a load_tools query)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('inspect') / 'demo.db'}"
    _run("demo", "--db", url, "--turns", "4")
    return url


def _files(url: str) -> dict[str, bytes]:
    folder = Path(url.removeprefix("sqlite:///")).parent
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if ".db" in p.name}


def test_sessions_lists_the_stored_ones(demo_db: str) -> None:
    rows = json.loads(_run("sessions", "--db", demo_db, "--format", "json"))
    assert [(r["session"], r["turns"], r["status"]) for r in rows] == [("demo-1", 4, "active")]
    with Store(demo_db) as store:
        assert rows[0]["loaded"] == len(store.snapshot("demo-1").loaded)  # type: ignore[union-attr]


def test_show_gives_the_loaded_tools_menu_and_prefix(demo_db: str) -> None:
    shown = json.loads(_run("show", "demo-1", "--db", demo_db, "--format", "json"))
    with Store(demo_db) as store:
        snapshot = store.snapshot("demo-1")
    assert snapshot is not None
    assert [t["tool"] for t in shown["loaded"]] == [t.name for t in snapshot.loaded]
    assert {t["source"] for t in shown["loaded"]} >= {"core", "escape"}
    where = {t["source"]: t["shown"] for t in shown["loaded"]}
    assert where["core"] == "prefix" and where["escape"] == "revealed"  # loaded after the start
    assert any(t["last_used_turn"] for t in shown["loaded"])
    assert "- weather: " in shown["menu"] and shown["menu"] in shown["prefix"]
    assert shown["tool_tokens"] < shown["eager_tokens"]
    table = list(
        csv.reader(io.StringIO(_run("show", "demo-1", "--db", demo_db, "--format", "csv")))
    )
    assert table[0][:3] == ["position", "tool", "source"] and len(table) == len(snapshot.loaded) + 1
    assert "prompt prefix (" in _run("show", "demo-1", "--db", demo_db)


def test_explain_is_a_dry_run_with_scores_and_the_bar(demo_db: str) -> None:
    before = _files(demo_db)
    message = "Will it rain in Oslo tomorrow? Also push my branch."
    rows = json.loads(
        _run("explain", message, "--session", "demo-1", "--db", demo_db, "--format", "json")
    )
    fresh = json.loads(
        _run("explain", "what's the weather in Oslo tomorrow?", "--db", demo_db, "--format", "json")
    )
    assert _files(demo_db) == before  # nothing written: not a row, not a cached vector
    assert all(r["bar"] is not None and r["fused"] is not None for r in rows)
    assert any(r["decision"] == "loaded already" for r in rows)
    weather = [r for r in fresh if r["bundle"] == "weather" and r["decision"].startswith("loads")]
    assert weather and all(r["score"] >= r["bar"] for r in weather)
    below = [r for r in fresh if r["decision"] == "below the bar"]
    assert below and all(r["score"] < r["bar"] for r in below)
    with Store(demo_db) as store:
        assert [s.session_id for s in store.sessions()] == ["demo-1"]


def test_history_shows_a_query_escapes_query(demo_db: str) -> None:
    out = _run("history", "demo-1", "--db", demo_db, "--format", "csv")
    assert "load_tools query: look up Dana's email address" in out


@pytest.mark.parametrize(
    "args",
    [
        ["show", "nope"],
        ["explain", "hello", "--session", "nope"],
        ["explain", "  "],
    ],
)
def test_bad_arguments_get_one_line(demo_db: str, args: list[str]) -> None:
    result = CliRunner().invoke(cli, [*args, "--db", demo_db])
    assert result.exit_code != 0
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1


def test_a_missing_store_is_refused_and_not_created(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'none.db'}"
    result = CliRunner().invoke(cli, ["sessions", "--db", url])
    assert result.exit_code == 2 and "no tooltray database" in result.output
    assert not (tmp_path / "none.db").exists()


def test_log_level_switch_logs_selection(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'v.db'}"
    result = CliRunner().invoke(cli, ["--log-level", "info", "demo", "--db", url, "--turns", "1"])
    assert result.exit_code == 0
    assert "INFO tooltray: demo-1 turn 1 selected: " in result.stderr


def test_explain_in_an_empty_folder_runs_on_a_fresh_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No database yet: explain says so and runs in memory, creating nothing; an array catalog
    without groups is explained with its inferred bundles, and explain says they were inferred.
    A database named and missing (a typo) and a session where there is none are refused."""
    for var in ("TOOLTRAY_DB", "TOOLTRAY_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    tools = [
        ("get_weather", "Get the current weather forecast for a city."),
        ("get_weather_alerts", "List severe weather warnings for a region."),
        ("send_email", "Send an email message to a recipient."),
        ("send_sms", "Send a text message to a phone number."),
    ]
    array = [{"type": "function", "function": {"name": n, "description": d}} for n, d in tools]
    (tmp_path / "tools.json").write_text(json.dumps(array), encoding="utf-8")
    args = ["explain", "Will it rain in Oslo tomorrow?", "--catalog", "tools.json"]
    result = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert rows[0]["tool"] in {"get_weather", "get_weather_alerts"}
    assert rows[0]["bundle"] == "weather" and rows[0]["decision"].startswith("loads")
    assert "fresh in-memory store" in result.stderr and "`tooltray demo`" in result.stderr
    assert "bundles were inferred from the tool names" in result.stderr
    for refused in (["--session", "s1"], ["--db", "typo.db"]):
        out = CliRunner().invoke(cli, [*args, *refused])
        assert out.exit_code == 2 and "`tooltray db upgrade`" in out.output, out.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tools.json"]
