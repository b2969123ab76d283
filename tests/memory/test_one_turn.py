"""One meaning of "turn": a user turn, whatever the agent emits with ``turn-completed``.

The test follows the README's "One turn" example literally (``prepare`` before every model call,
one tool call per turn, ``TurnCompleted(message_count=len(messages))``): the stored turn, idle
eviction and a fallback's one-turn life all count user turns, not messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed
from tooltray.memory.config import Settings
from tooltray.memory.core.session import user_turn
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.store import Store
from tooltray.tools.demo import demo_registry

SID = "session-1"
ASKS = [
    ("What is the weather in Oslo tomorrow?", "weather_forecast"),
    ("Send an email to Ann about the weather", "email_send"),
    ("Convert 20 euros to dollars", "math_currency_convert"),
    ("And the air quality in Oslo?", "weather_air_quality"),
]


@pytest.fixture
def trinket(tmp_path: Path) -> Iterator[ToolLoaderTrinket]:
    url = f"sqlite:///{tmp_path / 'agent.db'}"
    settings = Settings(db=url, context_window=8192, idle_turns=3)
    with ToolLoaderTrinket(demo_registry(), Store(url), settings=settings) as made:
        yield made


def one_turn(
    trinket: ToolLoaderTrinket, messages: list[dict[str, Any]], ask: str, tool: str
) -> None:
    """The README's loop for one user turn: one tool call, then the answer."""
    messages.append({"role": "user", "content": ask})
    trinket.prepare(SID, messages)  # before the model call that calls the tool
    call = {"id": f"c{len(messages)}", "type": "function"}
    call["function"] = {"name": tool, "arguments": json.dumps({})}  # type: ignore[assignment]
    messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
    messages.append({"role": "tool", "tool_call_id": call["id"], "content": "done"})
    emit(tool_used, SID, ToolUsed(tool=tool))
    trinket.prepare(SID, messages)  # before the model call that answers
    messages.append({"role": "assistant", "content": "Done."})
    emit(turn_completed, SID, TurnCompleted(message_count=len(messages)))


def stored_turn(trinket: ToolLoaderTrinket) -> int:
    stored = trinket.store.snapshot(SID)
    assert stored is not None
    return stored.turn


def test_three_user_turns_are_turn_three(trinket: ToolLoaderTrinket) -> None:
    messages: list[dict[str, Any]] = []
    for ask, tool in ASKS[:3]:
        one_turn(trinket, messages, ask, tool)
    assert len(messages) == 12 and user_turn(messages) == 3
    assert stored_turn(trinket) == 3
    assert [r.turn for r in trinket.store.turns(SID)] == [1, 2, 3]


def test_idle_eviction_counts_user_turns(trinket: ToolLoaderTrinket) -> None:
    """``idle_turns=3``: a tool selected at turn 1 and never used stays at a resume at turn 3
    (idle 2 turns) and leaves at a resume at turn 4 (idle 3)."""
    messages: list[dict[str, Any]] = []
    one_turn(trinket, messages, *ASKS[0])
    stored = trinket.store.snapshot(SID)
    assert stored is not None
    idle = [t.name for t in stored.loaded if t.source in ("semantic", "lexical")]
    idle = [n for n in idle if n not in {tool for _, tool in ASKS}]
    assert idle, "the first selection loaded tools the session never uses"
    for ask, tool in ASKS[1:3]:
        one_turn(trinket, messages, ask, tool)
    trinket.start(SID, messages)  # resume boundary at user turn 3
    assert set(idle) <= set(trinket.loaded(SID))
    assert not evicted(trinket)
    one_turn(trinket, messages, *ASKS[3])
    trinket.start(SID, messages)  # resume boundary at user turn 4 (it may select them again)
    assert set(idle) <= {tool for turn, tool in evicted(trinket) if turn == 4}


def evicted(trinket: ToolLoaderTrinket) -> list[tuple[int, str | None]]:
    return [(e.turn, e.tool) for e in trinket.store.history(SID) if e.kind == "evicted"]


def test_a_fallback_lasts_one_user_turn(trinket: ToolLoaderTrinket) -> None:
    messages: list[dict[str, Any]] = []
    one_turn(trinket, messages, *ASKS[0])
    messages.append({"role": "user", "content": "Check my calendar for tomorrow"})
    trinket.prepare(SID, messages)
    before = set(trinket.loaded(SID))
    trinket.handle_meta(SID, "fallback", {})
    trinket.prepare(SID, messages)  # mid-turn: every tool for this turn
    everything = set(trinket.loaded(SID))
    assert len(everything) > len(before)
    used = next(iter(sorted(everything - before)))
    emit(tool_used, SID, ToolUsed(tool=used))
    messages.append({"role": "assistant", "content": "Done."})
    emit(turn_completed, SID, TurnCompleted(message_count=len(messages)))
    after = set(trinket.loaded(SID))
    assert stored_turn(trinket) == 2
    assert used in after and after == before | {used}
