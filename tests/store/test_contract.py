"""The store contract, method by method, over every implementation (memory, SQLite, PostgreSQL).

``test_apply.py`` holds the change rules; this suite covers the rest of the protocol: a change
set applied in one call, the session list, cached vectors, long results, what finished turns
teach and how it is read back, and closing. The in-memory store learns as the databases do.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from tooltray.memory.store import BaseStore
from tooltray.memory.store.records import (
    Changes,
    HistoryEvent,
    LearnClock,
    LearnedSearch,
    Learning,
    Load,
    PruneReport,
    TurnRecord,
    Use,
)

DIM = 4


@pytest.fixture
def store(any_store: BaseStore) -> BaseStore:
    return any_store


def lesson(turn: int, tools: tuple[str, ...], seed: int | None = None) -> Learning:
    vector = None
    if seed is not None:
        found = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
        vector = (found / np.linalg.norm(found)).tobytes()
    return Learning(turn, tools, vector, "test-embedder" if vector else None)


def test_a_change_set_applies_step_by_step_with_each_steps_guard(store: BaseStore) -> None:
    steps = [
        Changes(meta={"selected": False}, only_new=True, events=[HistoryEvent("s", 0, "started")]),
        Changes(turn=1, loads=[Load("a", "semantic", 1)], meta={"selected": True}),
        Changes(loads=[Load("b", "semantic", 1)], unless={"selected": True}),  # skipped
        Changes(uses=[Use("a", 1)]),
    ]
    stored = store.apply("s", steps)
    assert stored == store.snapshot("s")
    assert stored.turn == 1 and stored.names() == ["a"] and stored.meta["selected"] is True
    assert [(e.kind, e.tool) for e in store.history("s")] == [
        ("started", None),
        ("loaded", "a"),
        ("used", "a"),
    ]
    assert store.apply("s", steps[:1]).names() == ["a"], "a start of an existing session: no-op"
    assert store.apply("t", []).names() == [] and store.snapshot("t") is None


def test_sessions_list_every_session_newest_first(store: BaseStore) -> None:
    assert store.sessions() == []
    store.apply("old", Changes(turn=2, loads=[Load("a", "semantic", 1)]))
    store.apply("new", Changes(turn=1))
    found = store.sessions()
    assert [(s.session_id, s.turn, s.loaded_count) for s in found] == [
        ("new", 1, 0),
        ("old", 2, 1),
    ]


def test_embeddings_are_kept_per_embedder_and_first_wins(store: BaseStore) -> None:
    first, second = np.arange(DIM, dtype=np.float64), np.ones(DIM)
    store.put_embeddings("e1", {"h": first})
    store.put_embeddings("e1", {"h": second})
    found = store.get_embeddings("e1", ["h", "missing"])
    assert list(found) == ["h"] and found["h"].dtype == np.float32
    assert np.array_equal(found["h"], first.astype(np.float32))
    assert store.get_embeddings("e2", ["h"]) == {}


def test_results_round_trip_and_replace(store: BaseStore) -> None:
    assert store.get_result("r1") is None
    store.put_result("r1", "s", 1, "tool", "long text")
    store.put_result("r1", "s", 2, "tool", "newer text")
    assert store.get_result("r1") == "newer text"


def test_learning_is_stored_with_the_turn_and_read_back(store: BaseStore) -> None:
    clock, rows = store.past_requests(0)
    assert (clock.newest, rows) == (0, []) and store.learned_mates(["a"], 0.0)[0] == []
    store.apply("s", Changes(turn=1, learn=lesson(1, ("a", "b"), seed=1)))
    store.apply("s", Changes(turn=1, learn=lesson(1, ("a", "z"), seed=2)))  # turn taught once
    store.apply("s", Changes(turn=2, learn=lesson(2, ("c",))))  # no vector: co-use only
    mates, clock = store.learned_mates(["a"], 0.0)
    shares = {m.mate: round(m.weight / m.own, 2) for m in mates}
    assert shares == {"b": 1.0, "c": 1.0}  # b: the same turn; c: the turn after a
    assert clock.oldest == 1 and clock.newest >= 2  # a PostgreSQL sequence skips a refused id
    clock, rows = store.past_requests(0)
    assert [(r.id, r.tools, r.session_id, r.dim) for r in rows] == [(1, ("a", "b"), "s", DIM)]
    assert rows[0].vector == lesson(1, (), seed=1).vector
    assert store.past_requests(clock.newest) == (clock, [])


def test_searches_are_learned_with_their_turn_once_and_read_back(store: BaseStore) -> None:
    """A turn's searches are stored with its lesson (the ones that led to a tool), once per
    turn like the turn itself, and read back after an id with their own clock."""
    assert store.past_searches(0) == (LearnClock(0, 0, 0), [])
    vector = lesson(1, (), seed=3).vector
    assert vector is not None
    led, empty = LearnedSearch(("b",), vector, "e", "find b"), LearnedSearch((), vector, "e")
    taught = replace(lesson(1, ("a", "b"), seed=1), searches=(led, empty))
    store.apply("s", Changes(turn=1, learn=taught))
    store.apply("s", Changes(turn=1, learn=taught))  # a replayed turn teaches its searches once
    clock, rows = store.past_searches(0)
    assert [(r.tools, r.session_id, r.dim, r.vector) for r in rows] == [(("b",), "s", DIM, vector)]
    assert clock.newest == clock.oldest == rows[0].id
    assert store.past_searches(clock.newest) == (clock, [])
    store.apply("t", Changes(turn=1, learn=replace(taught, searches=(led, led))))
    clock, rows = store.past_searches(rows[0].id)
    assert [r.session_id for r in rows] == ["t", "t"] and clock.newest == rows[-1].id


def test_learned_searches_keep_as_many_as_past_requests(store: BaseStore) -> None:
    """``learn_max_requests`` bounds the past searches too, the oldest going first."""
    vector = lesson(1, (), seed=3).vector
    assert vector is not None
    led = LearnedSearch(("b",), vector, "e")
    for turn in range(1, 6):
        taught = replace(lesson(turn, ("a",), seed=turn), max_requests=2, searches=(led,))
        store.apply("s", Changes(turn=turn, learn=taught))
    clock, rows = store.past_searches(0)
    assert len(rows) == 2 and rows[-1].id == clock.newest and rows[0].id == clock.oldest


def test_weak_mates_stay_below_the_share(store: BaseStore) -> None:
    for turn in range(1, 5):
        store.apply("s", Changes(turn=turn, learn=lesson(turn, ("a",) if turn > 1 else ("a", "b"))))
    store.apply("t", Changes(turn=1, learn=lesson(1, ("x",))))
    assert {m.mate for m in store.learned_mates(["a"], 0.2)[0]} == {"b"}
    assert store.learned_mates(["a"], 0.5)[0] == []


def test_close_releases_and_a_closed_store_can_be_dropped(store: BaseStore) -> None:
    store.apply("s", Changes(turn=1))
    store.close()
    store.close()  # twice is harmless


def test_prune_drops_old_history_and_turns_and_keeps_the_rest(store: BaseStore) -> None:
    record = TurnRecord("s", 1, "hash", 10, 1)
    store.apply(
        "s", Changes(turn=1, uses=[Use("a", 1)], turn_record=record, learn=lesson(1, ("a",)))
    )
    now = datetime.now(timezone.utc)
    assert store.prune(now - timedelta(days=1)) == PruneReport(0, 0)
    assert store.prune(now + timedelta(days=1)) == PruneReport(1, 1)
    assert store.history("s") == [] and store.turns("s") == []
    stored = store.snapshot("s")
    assert stored is not None and stored.turn == 1
    assert store.learned_mates(["a"], 0.0)[1].newest >= 1, "what was learned stays"
