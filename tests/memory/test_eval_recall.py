"""``tooltray eval recall``: recall per turn from the stored history, and its exit codes.

The passing store is written by driving the real trinket (native load_tools recovery, text-path
unlisted call); the failing one is a hand-built history with a use nothing had loaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tooltray.memory.cli.main import cli
from tooltray.memory.eval.recall import evaluate_store
from tooltray.memory.store import Store
from tooltray.memory.store.records import Changes, HistoryEvent, Load, Unload, Use

from .conftest import MakeTrinket, finish_turn, user

TRIP = "Find me flights from Boston to Lisbon on Nov 10 and a hotel there under 180 a night."
SQL = "How many orders did we ship last month? The numbers are in the sales database."


def _recall(url: str, *args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["eval", "recall", "--db", url, "--format", "json", *args])
    doc = json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}
    return result.exit_code, doc


def test_driven_trinket_passes_with_hits_and_recoveries(
    make_trinket: MakeTrinket, db_url: str
) -> None:
    native = make_trinket(opening="share")  # the test is about eval, not the opening
    view = native.prepare("n", [user(TRIP)])
    assert "travel_search_flights" in view.loaded and "git_push" not in view.loaded
    finish_turn("n", 1, ["travel_search_flights"])
    messages = [user(TRIP), {"role": "assistant", "content": "ok"}, user(SQL)]
    native.prepare("n", messages)
    native.handle_meta("n", "load_tools", {"tools": ["git_push"]})
    finish_turn("n", 2, ["git_push"])
    native.close()
    text = make_trinket(path="text", opening="share")
    assert "git_push" not in text.prepare("t", [user(TRIP)]).loaded
    finish_turn("t", 1, ["git_push"])  # the unlisted call runs; the trinket auto-loads it

    code, doc = _recall(db_url)
    assert code == 0, doc
    turns = {(t["session"], t["turn"]): t for t in doc["turns"]}
    assert turns[("n", 1)]["hit"] == "travel_search_flights"
    assert turns[("n", 2)]["recovered"] == "git_push (load_tools)"
    assert turns[("t", 1)]["recovered"] == "git_push (unlisted_call)"
    summary = doc["summary"]
    assert summary["recall"] == 1.0 and summary["passed"] is True
    assert summary["first_pass_recall"] == round(1 / 3, 4)
    assert summary["escapes"] == 2 and summary["misses"] == 0

    code, doc = _recall(db_url, "--session", "n")
    assert code == 0 and doc["summary"]["sessions"] == 1
    assert doc["summary"]["escape_rate"] == 0.5


def _hand_built(url: str) -> None:
    with Store(url) as store:
        store.apply("h", Changes(turn=1, loads=[Load("a", "semantic", 1)], uses=[Use("a", 1)]))
        store.apply("h", Changes(turn=2, uses=[Use("b", 2)]))  # nothing ever loaded b: a miss
        store.apply("h", Changes(turn=3, unloads=[Unload("a", "evicted")], uses=[Use("a", 3)]))
        fb = Changes(turn=4, loads=[Load("c", "fallback", 4, fallback=True)])
        fb.events.append(HistoryEvent("h", 4, "escape", detail="fallback"))
        store.apply("h", fb)
        store.apply("h", Changes(uses=[Use("c", 4)]))
        store.apply("h", Changes(turn=5, uses=[Use("c", 5)]))  # loaded at turn 4: a hit now
        down = HistoryEvent("h", 6, "degraded", detail="selection: embedder down")
        store.apply("h", Changes(turn=6, events=[down]))
        store.apply("h", Changes(uses=[Use("z", 6)]))  # every tool was exposed: a hit


def test_hand_built_misses_fail_the_gate_and_a_lower_bar_passes(sqlite_url: str) -> None:
    _hand_built(sqlite_url)
    with Store(sqlite_url) as store:
        report = evaluate_store(store)
    per_turn = {t.turn: t for t in report.sessions[0].per_turn}
    assert [c.status for c in per_turn[1].calls] == ["hit"]
    assert per_turn[2].named("miss") == ["b"]
    assert per_turn[3].named("miss") == ["a"]
    assert per_turn[4].named("recovered") == ["c (fallback)"]
    assert per_turn[5].named("hit") == ["c"]
    assert per_turn[6].named("hit") == ["z"]
    assert report.summary()["recall"] == round(4 / 6, 4)
    assert report.summary()["escape_rate"] == round(1 / 6, 4)

    code, doc = _recall(sqlite_url)
    assert code == 1 and doc["summary"]["passed"] is False
    code, doc = _recall(sqlite_url, "--min-recall", "0.66")
    assert code == 0 and doc["summary"]["passed"] is True
    result = CliRunner().invoke(cli, ["eval", "recall", "--db", sqlite_url])
    assert result.exit_code == 1 and "FAIL" in result.stdout and "NO" in result.stdout
    result = CliRunner().invoke(cli, ["eval", "recall", "--db", sqlite_url, "--format", "csv"])
    assert result.stdout.splitlines()[0] == "session,turn,ok,hit,recovered,missed,escapes"


def test_unknown_session_and_missing_database_are_errors(sqlite_url: str, tmp_path: Path) -> None:
    _hand_built(sqlite_url)
    result = CliRunner().invoke(cli, ["eval", "recall", "--db", sqlite_url, "--session", "nope"])
    assert result.exit_code == 2 and "no session 'nope'" in result.output
    missing = f"sqlite:///{tmp_path / 'absent.db'}"
    result = CliRunner().invoke(cli, ["eval", "recall", "--db", missing])
    assert result.exit_code == 2 and "no tooltray database" in result.output
    assert not (tmp_path / "absent.db").exists()
