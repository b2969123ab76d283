"""Reveal by appending (the default): the prefix changes only at boundaries, later tools are
revealed at the end of the context, stored, and reachable through the ``call_tool`` bridge.

A real SQLite file, the demo catalog and the real embedder; the conversation follows the README's
loop (``prepare`` before every model call, ``tool-used``, ``turn-completed``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed
from tooltray.memory.agent.calls import INVALID, META, OK, REFUSED, CallRunner
from tooltray.memory.config import Settings
from tooltray.memory.core.prompt import BRIDGE_HINT, REVEAL_HEAD, TEXT_HINT, PromptView
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.metatools.meta_tools import CALL_TOOL
from tooltray.memory.store import Store
from tooltray.tools.demo import demo_registry

ASKS = [
    "What is the weather in Oslo tomorrow?",
    "Convert 20 euros to dollars, please.",
    "Send an email to Ann about the weather.",
]


def _trinket(url: str, **settings: Any) -> ToolLoaderTrinket:
    full = Settings(db=url, context_window=8192, cost_profile="price", **settings)
    return ToolLoaderTrinket(demo_registry(), Store(url), settings=full)


def _play(trinket: ToolLoaderTrinket, sid: str) -> tuple[list[PromptView], list[dict[str, Any]]]:
    """Three user turns, each prepared, answered and completed; every view handed out."""
    views: list[PromptView] = []
    messages: list[dict[str, Any]] = []
    for turn, ask in enumerate(ASKS, start=1):
        messages.append({"role": "user", "content": ask})
        views.append(trinket.prepare(sid, messages))
        messages.append({"role": "assistant", "content": "Done."})
        emit(turn_completed, sid, TurnCompleted(turn=turn))
    return views, messages


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'reveal.db'}"


def test_later_tools_are_revealed_before_their_turn_and_the_prefix_never_changes(
    url: str,
) -> None:
    with _trinket(url) as trinket:
        views, messages = _play(trinket, "s")
    assert len({v.prefix_hash for v in views}) == 1
    assert len({json.dumps(v.tools(), sort_keys=True) for v in views}) == 1
    last = views[-1]
    assert last.revealed, "the later turns revealed nothing: growth did not run"
    assert set(s.name for s in last.revealed) <= set(last.loaded)
    assert not {s.name for s in last.revealed} & {s.name for s in last.specs}
    sent = last.messages(messages)
    turns = [m for m in sent if m["role"] == "user"]
    for turn, text in last.notes:
        assert turns[turn - 1]["content"].startswith(REVEAL_HEAD) and BRIDGE_HINT in text
        assert turns[turn - 1]["content"].endswith(ASKS[turn - 1])
    assert turns[0]["content"] == ASKS[0]  # the opening turn's message is never touched


def test_each_request_extends_the_one_before_it(url: str) -> None:
    """What a cache re-uses: every later request starts with the whole earlier one."""
    with _trinket(url) as trinket:
        messages: list[dict[str, Any]] = []
        sent_before: list[dict[str, Any]] = []
        for turn, ask in enumerate(ASKS, start=1):
            messages.append({"role": "user", "content": ask})
            sent = trinket.prepare("s", messages).messages(messages)
            assert sent[: len(sent_before)] == sent_before
            messages.append({"role": "assistant", "content": "Done."})
            sent_before = [*sent, messages[-1]]
            emit(turn_completed, "s", TurnCompleted(turn=turn))


def test_a_restarted_process_renders_the_same_bytes(url: str) -> None:
    with _trinket(url) as first:
        views, messages = _play(first, "s")
    with _trinket(url) as second:
        again = second.prepare("s", messages)
    assert again.prefix_hash == views[-1].prefix_hash
    assert again.messages(messages) == views[-1].messages(messages)
    assert [s.name for s in again.revealed] == [s.name for s in views[-1].revealed]


def test_compaction_folds_what_is_loaded_into_the_prefix_and_evicts_idle_tools(url: str) -> None:
    with _trinket(url, idle_turns=2) as trinket:
        views, messages = _play(trinket, "s")
        revealed = [s.name for s in views[-1].revealed]
        emit(tool_used, "s", ToolUsed(tool=revealed[0], turn=3))
        evicted = trinket.compact("s", turn=3)
        after = trinket.prepare("s", messages)
    assert after.prefix_hash != views[-1].prefix_hash and after.revealed == () and not after.notes
    assert revealed[0] in {s.name for s in after.specs}
    assert evicted and not set(evicted) & {s.name for s in after.specs}
    assert after.messages(messages)[1:] == messages  # the woven notes went with the old prefix


def test_a_load_answer_lists_the_tools_and_the_bridge_runs_them(url: str) -> None:
    with _trinket(url) as trinket:
        messages = [{"role": "user", "content": ASKS[0]}]
        before = trinket.prepare("s", messages)
        text = trinket.handle_meta("s", "load_tools", {"tools": ["database_query"]})
        after = trinket.prepare("s", messages)
        runner = CallRunner(trinket, native=True)
        raw = json.dumps({"name": "database_query", "arguments": {"sql": "SELECT 1"}})
        ran = runner.run("s", 1, 0, CALL_TOOL, raw)
        bad = runner.run("s", 1, 1, CALL_TOOL, {"name": "database_query", "arguments": {}})
        nameless = runner.run("s", 1, 2, CALL_TOOL, {"arguments": {}})
        unload = {"name": "unload_tools", "arguments": {"tools": ["database_query"]}}
        unloaded = runner.run("s", 1, 3, CALL_TOOL, unload)  # meta-tools off tools= still run
        left = trinket.loaded("s")
    assert "database_query(" in text and REVEAL_HEAD in text and BRIDGE_HINT in text
    assert after.prefix_hash == before.prefix_hash and "database_query" in after.loaded
    assert (ran.tool, ran.status) == ("database_query", OK), ran.result
    assert bad.status == INVALID and "sql" in bad.result
    assert nameless.status == INVALID and "call_tool needs" in nameless.result
    assert unloaded.status == META and "database_query" not in left
    assert {s.name for s in after.specs} >= {"load_tools", CALL_TOOL}
    assert not {"unload_tools", "read_result"} & {s.name for s in after.specs}


def test_the_bridge_keeps_the_allow_list(url: str) -> None:
    full = Settings(db=url, context_window=8192, deny=["shopping_checkout"])
    with ToolLoaderTrinket(demo_registry(), Store(url), settings=full) as trinket:
        trinket.prepare("s", [{"role": "user", "content": ASKS[0]}])
        runner = CallRunner(trinket, native=True)
        refused = runner.run("s", 1, 0, CALL_TOOL, {"name": "shopping_checkout"})
        assert trinket.unwrap(CALL_TOOL, '{"name": "x", "arguments": {"a": 1}}') == (
            "x",
            '{"a": 1}',
        )
    assert refused.status == REFUSED and refused.tool is None


def test_on_the_text_path_revealed_tools_stay_out_of_the_system_text(url: str) -> None:
    with _trinket(url, path="text") as trinket:
        views, messages = _play(trinket, "t")
    last = views[-1]
    assert len({v.system_prefix for v in views}) == 1 and last.revealed
    assert all(s.name + "(" not in last.system_prefix for s in last.revealed)
    assert all(TEXT_HINT in text for _, text in last.notes)


def test_the_prefix_reveal_still_rewrites_the_prefix(url: str) -> None:
    with _trinket(url, reveal="prefix") as trinket:
        views, _ = _play(trinket, "p")
    assert len({v.prefix_hash for v in views}) > 1 and views[-1].revealed == ()
    assert CALL_TOOL not in {s.name for s in views[-1].specs}
