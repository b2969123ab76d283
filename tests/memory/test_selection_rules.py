"""Admission within caps, ordering, idle eviction and fallback expiry, and the local store rules."""

from __future__ import annotations

import pytest

from tooltray.memory.core.policy import (
    Caps,
    admit,
    admit_growth,
    expired_fallbacks,
    idle_tools,
    order_candidates,
)
from tooltray.memory.retrieval.scoring import Candidate
from tooltray.memory.store.records import (
    Changes,
    Load,
    LoadedTool,
    Unload,
    Use,
    apply_local,
    empty_snapshot,
)

pytestmark = pytest.mark.no_embedder  # rules on hand-made numbers (tests/conftest.py)


def _loaded(
    name: str,
    source: str = "semantic",
    turn: int = 1,
    used: int | None = None,
    fb: bool = False,
    pos: int = 0,
) -> LoadedTool:
    return LoadedTool(name, pos, turn, used, source, None, fb)


def test_core_is_free_and_picks_respect_count_and_token_caps() -> None:
    cands = order_candidates(
        ["core1"],
        ["sk"],
        [
            Candidate("a", "semantic", 0.2),
            Candidate("b", "semantic", 0.9),
            Candidate("c", "lexical", 0.5),
        ],
    )
    assert [c.name for c in cands] == ["core1", "sk", "b", "c", "a"]
    tokens = {"core1": 999, "sk": 100, "a": 100, "b": 300, "c": 100}
    got = admit(cands, tokens, Caps(max_tools=3, token_budget=450))
    assert [c.name for c in got] == ["core1", "sk", "b"]
    got = admit(cands, tokens, Caps(max_tools=3, token_budget=300))
    assert [c.name for c in got] == ["core1", "sk", "c", "a"]


def test_admit_counts_what_is_already_loaded_and_skips_duplicates() -> None:
    loaded = [_loaded("core1", "core"), _loaded("x")]
    got = admit(
        [Candidate("x", "semantic"), Candidate("y", "semantic"), Candidate("z", "semantic")],
        {},
        Caps(2, 10**6),
        loaded,
    )
    assert [c.name for c in got] == ["y"]


def test_idle_tools_spare_core_and_use_last_use() -> None:
    loaded = [
        _loaded("core1", "core", 1),
        _loaded("old", turn=1),
        _loaded("used", turn=1, used=6),
        _loaded("new", turn=5),
    ]
    assert idle_tools(loaded, turn=7, idle_turns=5) == ["old"]
    assert idle_tools(loaded, turn=11, idle_turns=5) == ["old", "used", "new"]


def test_fallback_expiry_keeps_what_was_used_that_turn() -> None:
    loaded = [_loaded("a", fb=True, used=3), _loaded("b", fb=True), _loaded("c")]
    assert expired_fallbacks(loaded, 3) == (["a"], ["b"])


def test_apply_local_appends_never_reorders_and_turn_only_grows() -> None:
    snap = empty_snapshot("s")
    snap = apply_local(
        snap, Changes(turn=2, loads=[Load("a", "core", 1), Load("b", "semantic", 1)])
    )
    snap = apply_local(
        snap, Changes(turn=1, loads=[Load("c", "escape", 2), Load("a", "escape", 2)])
    )
    assert snap.names() == ["a", "b", "c"] and snap.turn == 2
    assert snap.loaded[0].source == "core"
    snap = apply_local(
        snap, Changes(unloads=[Unload("b")], loads=[Load("d", "fallback", 2, fallback=True)])
    )
    assert snap.names() == ["a", "c", "d"]
    assert [t.position for t in snap.loaded] == sorted(t.position for t in snap.loaded)
    snap = apply_local(
        snap, Changes(loads=[Load("d", "escape", 2)], uses=[Use("d", 2), Use("d", 1)])
    )
    d = snap.loaded[-1]
    assert (d.fallback, d.source, d.last_used_turn) == (False, "escape", 2)


def test_growth_answers_to_the_hard_ceiling_not_the_selection_caps() -> None:
    full = [_loaded(f"t{i}", pos=i) for i in range(24)]  # the first selection filled max_tools
    cands = [Candidate("new1", "semantic", 3.0), Candidate("t3", "semantic", 2.9)]
    cands += [Candidate("new2", "semantic", 2.5), Candidate("new3", "semantic", 2.4)]
    assert admit(cands, {}, Caps(max_tools=24, token_budget=6000), full) == []
    assert [c.name for c in admit_growth(cands, full, hard_max=64)] == ["new1", "new2", "new3"]
    assert [c.name for c in admit_growth(cands, full, hard_max=26)] == ["new1", "new2"]
    assert admit_growth(cands, full, hard_max=24) == []
