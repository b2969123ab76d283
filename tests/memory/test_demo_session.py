"""The demo as a newcomer meets it: a fair scripted model, resume where it stopped, a finished
session's summary, and closing lines that give recall, escapes, tokens and prefix changes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed
from tooltray.memory.cli.main import cli
from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.store import Store
from tooltray.tools.demo import demo_registry, demo_script, demo_skills_dir
from tooltray.tools.demo.model import (
    ModelCall,
    ScriptedTurn,
    UnfairCallError,
    check_fair,
    menu_bundles,
)


def _sql(url: str, query: str) -> list[str]:
    result = CliRunner().invoke(cli, ["sql", query, "--db", url, "--format", "csv"])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()[1:]


def test_the_scripted_model_names_only_what_its_prompt_showed(sqlite_url: str) -> None:
    """Play the script against real views; record each call beside the view it was made on."""
    store = Store(sqlite_url, auto_upgrade=True)
    settings = Settings(db=sqlite_url, skills_dir=demo_skills_dir())
    trinket = ToolLoaderTrinket(demo_registry(), store, settings=settings)
    seen: list[tuple[set[str], set[str], ModelCall]] = []  # offered, menu + names read, call
    messages: list[dict[str, Any]] = []
    try:
        for number, step in enumerate(demo_script(), 1):
            messages.append({"role": "user", "content": step["user"]})
            model = ScriptedTurn([dict(c) for c in step["calls"]])
            view = trinket.prepare("fair", messages)
            while (call := model.act(view)) is not None:
                offered = {s.name for s in view.specs}
                seen.append((offered, menu_bundles(view.system_prefix) | model.heard, call))
                if trinket.is_meta(call.name):
                    model.hear(trinket.handle_meta("fair", call.name, call.arguments))
                else:
                    emit(tool_used, "fair", ToolUsed(tool=call.name))
                view = trinket.prepare("fair", messages)
            emit(turn_completed, "fair", TurnCompleted(turn=number))
            messages.append({"role": "assistant", "content": step["assistant"]})
    finally:
        trinket.close()
    assert len(seen) > sum(len(s["calls"]) for s in demo_script())  # some recoveries happened
    for offered, menu, call in seen:
        assert call.name in offered, call
        assert set(call.arguments.get("tools", [])) <= offered | menu | {"*"}, call
    loads = [c for _, _, c in seen if c.name == "load_tools"]
    assert any("query" in c.arguments for c in loads) and any("tools" in c.arguments for c in loads)


def test_check_fair_refuses_a_hidden_tool_name() -> None:
    class View:
        system_prefix = "Tool bundles for load_tools:\n- contacts: People.\n- email: Mail.\n"
        specs = (ModelCall("load_tools", {}), ModelCall("web_search", {}))

    fine = ModelCall("load_tools", {"tools": ["contacts", "web_search"]})
    assert check_fair(View(), fine) is fine
    with pytest.raises(UnfairCallError, match="contacts_search"):
        check_fair(View(), ModelCall("load_tools", {"tools": ["contacts_search"]}))
    with pytest.raises(UnfairCallError, match="email_send"):
        check_fair(View(), ModelCall("email_send", {}))


def test_a_second_run_resumes_the_same_session_at_its_next_turn(sqlite_url: str) -> None:
    runner = CliRunner()
    first = runner.invoke(cli, ["demo", "--db", sqlite_url, "--turns", "3"])
    assert first.exit_code == 0, first.output
    again = runner.invoke(cli, ["demo", "--db", sqlite_url, "--turns", "2"])
    assert again.exit_code == 0, again.output
    assert "resuming demo-1 at turn 4 of 10" in again.output
    assert _sql(sqlite_url, "SELECT id, turn FROM sessions") == ["demo-1,5"]
    assert _sql(sqlite_url, "SELECT turn FROM turns ORDER BY turn") == list("12345")
    bad = runner.invoke(cli, ["demo", "--db", sqlite_url, "--turns", "0"])
    assert bad.exit_code != 0 and "Traceback" not in bad.output


def test_a_finished_demo_says_so_and_shows_its_summary(sqlite_url: str, tmp_path: Path) -> None:
    runner = CliRunner()
    full = runner.invoke(cli, ["demo", "--db", sqlite_url])
    assert full.exit_code == 0, full.output
    heads = ("first-pass recall: ", "escapes: ", "tool tokens: ", "prompt prefix changed at ")
    summary = [line for line in full.output.splitlines() if line.startswith(heads)]
    assert [next(h for h in heads if line.startswith(h)) for line in summary] == list(heads)
    assert "after recovery 1.00" in full.output and "fallback 1" not in full.output
    assert re.search(r"tool tokens: [\d,]+ over 10 turns, \d+% of eager", full.output)
    picture = tmp_path / "tooltray-demo-1.png"
    assert f"picture of the session: {picture}" in full.output and picture.stat().st_size > 0
    again = runner.invoke(cli, ["demo", "--db", sqlite_url])
    assert again.exit_code == 0, again.output
    assert "demo-1 is finished (10 of 10 turns)" in again.output
    assert [line for line in again.output.splitlines() if line in summary] == summary
    assert _sql(sqlite_url, "SELECT id FROM sessions") == ["demo-1"]


def _figures(output: str) -> tuple[float, int]:
    recall = re.search(r"first-pass recall: ([\d.]+)", output)
    escapes = re.search(r"escapes: (\d+)", output)
    assert recall and escapes, output
    return float(recall.group(1)), int(escapes.group(1))


def test_a_fresh_demo_on_the_same_store_learns_from_the_first(sqlite_url: str) -> None:
    """demo-2 meets the same requests demo-1 taught the store: fewer recoveries, none of the
    learned rows' text kept (vectors and counts only, the default)."""
    runner = CliRunner()
    first = runner.invoke(cli, ["demo", "--db", sqlite_url])
    second = runner.invoke(cli, ["demo", "--db", sqlite_url, "--fresh"])
    assert first.exit_code == 0 and second.exit_code == 0, second.output
    (recall_1, escapes_1), (recall_2, escapes_2) = _figures(first.output), _figures(second.output)
    assert recall_2 > recall_1 and escapes_2 < escapes_1
    assert _sql(sqlite_url, "SELECT id FROM sessions ORDER BY id") == ["demo-1", "demo-2"]
    taught = _sql(sqlite_url, "SELECT count(*), count(text), count(vector) FROM learn_requests")
    rows, texts, vectors = (int(x) for x in taught[0].split(","))
    assert rows >= 10 and texts == 0 and vectors == rows


def test_a_turn_cut_short_by_ctrl_c_is_replayed_on_resume(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during turn 1 (the model's first call), then resume: turn 1 is played again, not
    skipped, and completes (its row gets its usage) before turn 2 starts."""
    from tooltray.memory.cli.demo_play import DemoRun

    play = DemoRun._call

    def interrupted(self: DemoRun, call: ModelCall, model: ScriptedTurn) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(DemoRun, "_call", interrupted)
    runner = CliRunner()
    cut = runner.invoke(cli, ["demo", "--db", sqlite_url, "--turns", "2"])
    assert cut.exit_code == 130, cut.output
    assert _sql(sqlite_url, "SELECT turn, prompt_new IS NULL FROM turns") == ["1,1"]
    used = "SELECT DISTINCT tool FROM history WHERE kind = 'used' AND turn = 1"
    assert _sql(sqlite_url, used) == []
    monkeypatch.setattr(DemoRun, "_call", play)
    again = runner.invoke(cli, ["demo", "--db", sqlite_url, "--turns", "1"])
    assert again.exit_code == 0, again.output
    assert "resuming demo-1 at turn 1 of 10" in again.output
    assert _sql(sqlite_url, "SELECT turn, prompt_new IS NULL FROM turns") == ["1,0"]
    assert _sql(sqlite_url, used) == [demo_script()[0]["calls"][0]["name"]]  # turn 1 ran
    on = runner.invoke(cli, ["demo", "--db", sqlite_url, "--turns", "1"])
    assert "resuming demo-1 at turn 2 of 10" in on.output


def test_names_read_in_a_directory_answer_may_be_loaded_and_no_others() -> None:
    class View:
        system_prefix = "Tool bundles for load_tools:\n- git: Repositories.\n"
        specs = (ModelCall("load_tools", {}),)
        revealed = ()

    model = ScriptedTurn([{"name": "git_diff", "recover": {"query": "show the diff"}}])
    assert model.act(View()) == ModelCall("load_tools", {"query": "show the diff"})
    assert model.act(View()) == ModelCall("load_tools", {"tools": ["*"]})
    model.hear("Too many tools to list them all (3); ...\n- git: git_diff, git_log\n- time: now")
    assert model.heard == {"git_diff", "git_log", "now"}
    assert model.act(View()) == ModelCall("load_tools", {"tools": ["git_diff"]})
    with pytest.raises(UnfairCallError, match="git_diff"):
        model.act(View())  # read, loaded, still absent: it gives up
    with pytest.raises(UnfairCallError, match="git_blame"):
        check_fair(View(), ModelCall("load_tools", {"tools": ["git_blame"]}), model.heard)
