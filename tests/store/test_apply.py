"""The store contract: append-only order, fallback upgrades, max turn, uses, events, turns, meta.

Every test here runs over each implementation of the store protocol: the in-memory store,
SQLite and PostgreSQL (one parametrised suite, so the implementations cannot drift apart).
"""

from __future__ import annotations

import random
from datetime import timezone

import pytest

from tooltray.memory.store import BaseStore
from tooltray.memory.store.records import (
    Changes,
    HistoryEvent,
    Load,
    SessionSnapshot,
    TurnRecord,
    Unload,
    Use,
    apply_local,
    empty_snapshot,
)


@pytest.fixture
def store(any_store: BaseStore) -> BaseStore:
    """Each store implementation in turn: in memory, SQLite, PostgreSQL."""
    return any_store


def _kinds(store: BaseStore, session: str) -> list[tuple[str, str | None]]:
    return [(e.kind, e.tool) for e in store.history(session)]


def test_loads_append_in_order_and_never_reorder(store: BaseStore) -> None:
    first = store.apply("s", Changes(turn=1, loads=[Load("b", "core", 1), Load("a", "core", 1)]))
    assert first.names() == ["b", "a"]
    second = store.apply("s", Changes(turn=2, loads=[Load("c", "semantic", 2, 0.7)]))
    assert second.names() == ["b", "a", "c"]
    assert [t.position for t in second.loaded] == [0, 1, 2]
    again = store.apply("s", Changes(turn=3, loads=[Load("a", "manual", 3)]))
    assert again.names() == ["b", "a", "c"]
    assert again.loaded[1].source == "core" and again.loaded[1].loaded_turn == 1
    assert _kinds(store, "s") == [("loaded", "b"), ("loaded", "a"), ("loaded", "c")]


def test_unload_then_load_goes_to_the_end_with_unique_positions(store: BaseStore) -> None:
    store.apply("s", Changes(turn=1, loads=[Load(n, "core", 1) for n in "abc"]))
    snap = store.apply("s", Changes(turn=2, unloads=[Unload("c", "evicted"), Unload("zz")]))
    assert snap.names() == ["a", "b"]
    snap = store.apply("s", Changes(turn=3, unloads=[Unload("a")], loads=[Load("a", "manual", 3)]))
    assert snap.names() == ["b", "a"]
    positions = [t.position for t in snap.loaded]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    snap = store.apply("s", Changes(turn=4, loads=[Load("d", "escape", 4)]))
    assert snap.names() == ["b", "a", "d"]
    assert ("evicted", "c") in _kinds(store, "s") and ("unloaded", "a") in _kinds(store, "s")
    assert ("unloaded", "zz") not in _kinds(store, "s")


def test_real_load_turns_a_fallback_load_into_a_normal_one(store: BaseStore) -> None:
    store.apply("s", Changes(turn=1, loads=[Load("x", "core", 1)]))
    snap = store.apply("s", Changes(turn=2, loads=[Load("f", "fallback", 2, fallback=True)]))
    assert snap.loaded[1].fallback is True
    snap = store.apply("s", Changes(turn=2, loads=[Load("f", "fallback", 2, fallback=True)]))
    assert snap.loaded[1].fallback is True and len(snap.loaded) == 2
    snap = store.apply("s", Changes(turn=3, loads=[Load("f", "escape", 3, score=0.9)]))
    tool = snap.loaded[1]
    assert (tool.name, tool.position, tool.fallback, tool.source, tool.score) == (
        "f",
        1,
        False,
        "escape",
        0.9,
    )
    assert _kinds(store, "s") == [("loaded", "x"), ("fallback", "f"), ("loaded", "f")]
    snap = store.apply("s", Changes(loads=[Load("f", "fallback", 4, fallback=True)]))
    assert snap.loaded[1].fallback is False


def test_turn_only_moves_forward(store: BaseStore) -> None:
    assert store.apply("s", Changes(turn=5)).turn == 5
    assert store.apply("s", Changes(turn=3)).turn == 5
    assert store.apply("s", Changes()).turn == 5
    assert store.apply("s", Changes(turn=6)).turn == 6
    snapshot = store.snapshot("s")
    assert snapshot is not None and snapshot.turn == 6


def test_uses_raise_last_used_to_the_max_and_log_every_call(store: BaseStore) -> None:
    store.apply("s", Changes(turn=1, loads=[Load("x", "core", 1), Load("y", "core", 1)]))
    snap = store.apply("s", Changes(uses=[Use("x", 4), Use("x", 2), Use("ghost", 4)]))
    assert snap.loaded[0].last_used_turn == 4 and snap.loaded[1].last_used_turn is None
    snap = store.apply("s", Changes(uses=[Use("x", 3)]))
    assert snap.loaded[0].last_used_turn == 4
    used = [(e.tool, e.turn) for e in store.history("s") if e.kind == "used"]
    assert used == [("x", 4), ("x", 2), ("ghost", 4), ("x", 3)]
    assert "ghost" not in snap.names()


def test_events_turn_records_status_and_meta(store: BaseStore) -> None:
    event = HistoryEvent("other", 2, "selected", "x", "semantic", 0.8, "picked by hybrid")
    store.apply("s", Changes(turn=2, events=[event], meta={"mode": "selected", "n": 1}))
    record = TurnRecord("s", 2, "a" * 64, 1200, 5, 9000)
    snap = store.apply("s", Changes(turn_record=record, status="ended", meta={"n": 2}))
    assert snap.status == "ended" and snap.meta == {"mode": "selected", "n": 2}
    stored = store.history("s")[0]
    assert (stored.session_id, stored.kind, stored.detail, stored.score) == (
        "s",
        "selected",
        "picked by hybrid",
        0.8,
    )
    assert stored.at is not None and stored.at.tzinfo is not None
    store.apply("s", Changes(turn_record=TurnRecord("s", 2, "b" * 64, 900, 4)))
    turns = store.turns("s")
    assert [(t.turn, t.prefix_hash[0], t.tool_tokens, t.eager_tokens) for t in turns] == [
        (2, "b", 900, None)
    ]
    assert turns[0].at is not None and turns[0].at.utcoffset() == timezone.utc.utcoffset(None)


def test_snapshot_matches_apply_and_history_since(store: BaseStore) -> None:
    assert store.snapshot("s") is None
    applied = store.apply("s", Changes(turn=1, loads=[Load("x", "core", 1)]))
    assert store.snapshot("s") == applied
    assert applied.created_at is not None and applied.created_at.tzinfo is not None
    last = store.history("s")[-1].id
    store.apply("s", Changes(uses=[Use("x", 1)]))
    newer = store.history("s", since_id=last)
    assert [(e.kind, e.tool) for e in newer] == [("used", "x")]


def test_two_sessions_interleaved_stay_separate(store: BaseStore) -> None:
    for turn in range(1, 6):
        store.apply("a", Changes(turn=turn, loads=[Load(f"a{turn}", "core", turn)]))
        store.apply("b", Changes(turn=turn * 10, loads=[Load(f"b{turn}", "core", turn)]))
        store.apply("a", Changes(uses=[Use(f"a{turn}", turn)]))
    a, b = store.snapshot("a"), store.snapshot("b")
    assert a is not None and b is not None
    assert a.names() == [f"a{i}" for i in range(1, 6)] and a.turn == 5
    assert b.names() == [f"b{i}" for i in range(1, 6)] and b.turn == 50
    assert all(t.last_used_turn is None for t in b.loaded)
    assert {s.session_id: s.loaded_count for s in store.sessions()} == {"a": 5, "b": 5}


def _random_changes(rng: random.Random, turn: int) -> Changes:
    names = [f"t{i}" for i in range(8)]
    return Changes(
        turn=turn if rng.random() < 0.8 else None,
        unloads=[Unload(rng.choice(names)) for _ in range(rng.randint(0, 2))],
        loads=[
            Load(rng.choice(names), "semantic", turn, rng.random(), rng.random() < 0.3)
            for _ in range(rng.randint(0, 3))
        ],
        uses=[Use(rng.choice(names), rng.randint(0, turn)) for _ in range(rng.randint(0, 3))],
        status=rng.choice([None, "active", "idle"]),
        meta={"k": turn} if rng.random() < 0.3 else None,
    )


def _view(snap: SessionSnapshot) -> tuple[object, ...]:
    tools = [(t.name, t.last_used_turn, t.fallback, t.source, t.loaded_turn) for t in snap.loaded]
    return (snap.turn, snap.status, snap.meta, tools)


def test_store_mirrors_the_in_memory_rules(store: BaseStore) -> None:
    rng = random.Random(7)
    local = empty_snapshot("s")
    for turn in range(1, 41):
        changes = _random_changes(rng, turn)
        local = apply_local(local, changes)
        stored = store.apply("s", changes)
        assert _view(stored) == _view(local), f"diverged at turn {turn}: {changes}"


def test_a_start_for_an_existing_session_writes_nothing(store: BaseStore) -> None:
    started = Changes(meta={"selected": False}, events=[HistoryEvent("s", 0, "started")])
    started.only_new = True
    store.apply("s", started)
    store.apply("s", Changes(turn=1, loads=[Load("a", "core", 1)], meta={"selected": True}))
    again = store.apply("s", started)
    assert again.names() == ["a"] and again.meta == {"selected": True} and again.turn == 1
    assert _kinds(store, "s") == [("started", None), ("loaded", "a")]


def test_unless_skips_a_step_already_taken_here_and_in_memory(store: BaseStore) -> None:
    store.apply("s", Changes(turn=2, meta={"selected": True, "grown": 2}))
    growth = Changes(loads=[Load("b", "semantic", 2)], meta={"grown": 2}, unless={"grown": 2})
    assert store.apply("s", growth).names() == []
    assert _kinds(store, "s") == []
    local = apply_local(store.snapshot("s"), growth)  # type: ignore[arg-type]
    assert local.names() == []
    later = Changes(loads=[Load("b", "semantic", 3)], meta={"grown": 3}, unless={"grown": 3})
    assert store.apply("s", later).names() == ["b"]
