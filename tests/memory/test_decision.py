"""The turn's pure rules (``core/decision.py``) on hand-made snapshots and scores: no embedder, no
database, no signal; each returns a Decision value that is checked whole."""

from __future__ import annotations

from dataclasses import dataclass

from tooltray.memory.core import decision as decide
from tooltray.memory.core.decision import NOTHING, Conversation, Marks, Notice, Plan, Snap
from tooltray.memory.retrieval.scoring import Candidate
from tooltray.memory.store.records import (
    Learning,
    Load,
    LoadedTool,
    SessionMeta,
    SessionSnapshot,
    Unload,
    Use,
)


def _snap(
    turn: int = 0,
    loaded: tuple[LoadedTool, ...] = (),
    meta: SessionMeta | None = None,
    marks: Marks | None = None,
) -> Snap:
    return Snap(SessionSnapshot("s", turn, "active", loaded, meta or {}), marks or Marks())


def _tool(
    name: str, loaded: int, used: int | None = None, source: str = "semantic", fb: bool = False
) -> LoadedTool:
    return LoadedTool(name, 0, loaded, used, source, None, fb)  # type: ignore[arg-type]


def _conv(*users: str) -> Conversation:
    return Conversation.of([{"role": "user", "content": u} for u in users])


def test_a_fresh_start_is_stored_only_if_new_and_announced_after() -> None:
    dec = decide.start(_snap(), idle_turns=3, fresh=True)
    (step,) = dec.changes
    assert (step.status, step.only_new, step.meta) == ("active", True, {"selected": False})
    assert [e.kind for e in step.events] == ["started"] and not step.unloads
    assert dec.notices == (Notice("session_started", 0, (), resumed=False),)


def test_a_resume_counts_the_turn_then_evicts_idle_tools_but_never_core() -> None:
    loaded = (_tool("old", 1), _tool("busy", 1, used=4), _tool("clock", 0, source="core"))
    dec = decide.resume(_snap(4, loaded), turn=5, idle_turns=3)
    moved, boundary = dec.changes
    assert moved.turn == 5
    assert boundary.unloads == [Unload("old", "evicted")]
    assert [e.kind for e in boundary.events] == ["resumed"]
    assert dec.notices == (
        Notice("tools_unloaded", 5, ("old",), "evicted"),
        Notice("session_started", 5, ("busy", "clock"), resumed=True),
    )


def test_a_new_turn_ends_an_earlier_fallback_keeping_what_it_used() -> None:
    loaded = (_tool("kept", 2, used=2, fb=True), _tool("idle", 2, fb=True), _tool("mine", 1))
    snap = _snap(2, loaded, marks=Marks(fallback_turn=2))
    dec = decide.advance(snap, 3)
    (step,) = dec.changes
    assert step.turn == 3
    assert step.loads == [Load("kept", "escape", 3)] and step.unloads == [Unload("idle")]
    assert dec.notices == (Notice("tools_unloaded", 3, ("idle",), "fallback-expired"),)
    assert dec.marks == Marks(fallback_turn=None)
    assert decide.advance(snap, 2) is NOTHING  # the same turn again: nothing moves


def test_the_first_selection_loads_the_scores_in_order_once() -> None:
    snap, conv = _snap(1), _conv("book a hotel")
    owed = decide.due(snap, conv, growth="on_new_task")
    assert owed is not None and owed.first and owed.marks.grown_turn == 1
    plan = Plan(
        "selected", [Candidate("hotels", "semantic", 0.9), Candidate("maps", "lexical", 0.4)]
    )
    dec = decide.select(snap, conv, owed, plan, reveal="append")
    (step,) = dec.changes
    assert step.loads == [Load("hotels", "semantic", 1, 0.9), Load("maps", "lexical", 1, 0.4)]
    assert step.unless == {"selected": True}
    assert step.meta == {
        "selected": True,
        "mode": "selected",
        "grown": 1,
        "prefix": ["hotels", "maps"],
        "reveals": [],
    }
    assert [(e.kind, e.detail) for e in step.events] == [("selected", "selected")]
    assert dec.notices == (Notice("tools_loaded", 1, ("hotels", "maps"), "semantic"),)


def test_growth_is_owed_once_a_turn_and_reveals_after_the_stored_ones() -> None:
    meta: SessionMeta = {"selected": True, "prefix": ["a"], "reveals": [[1, ["b"]]]}
    snap, conv = _snap(3, (_tool("a", 0),), meta, Marks(grown_turn=1)), _conv("x", "y", "z")
    assert decide.due(snap, conv, growth="never") is None
    assert decide.due(_snap(3, meta=meta, marks=Marks(grown_turn=3)), conv, "every_turn") is None
    owed = decide.due(snap, conv, growth="every_turn")
    assert owed is not None and (owed.first, owed.fresh) == (False, 2)
    dec = decide.select(
        snap, conv, owed, Plan("selected", [Candidate("c", "semantic", 0.7)]), "append"
    )
    (step,) = dec.changes
    assert step.unless == {"grown": 3} and not step.events
    assert step.meta == {"grown": 3, "reveals": [[1, ["b"]], [3, ["c"]]]}


@dataclass(frozen=True)
class _Shown:
    """What a turn record reads of a rendered view."""

    prefix_hash: str
    loaded: tuple[str, ...]
    tool_tokens: int = 100
    eager_tokens: int = 900


def _view(prefix: str, loaded: tuple[str, ...]) -> _Shown:
    return _Shown(prefix, loaded)


def test_a_turn_record_is_written_once_per_view_and_a_new_prefix_is_announced() -> None:
    snap = _snap(2)
    first = decide.record_turn(snap, _view("h1", ("a",)))
    (step,) = first.changes
    assert step.turn_record is not None and step.turn_record.prefix_hash == "h1"
    assert first.notices == ()  # the first prefix handed out changes nothing
    after = snap.after(first)
    assert decide.record_turn(after, _view("h1", ("a",))) is NOTHING
    grown = decide.record_turn(after, _view("h2", ("a", "b")))
    assert grown.notices == (Notice("selection_changed", 2, detail="h2"),)
    assert grown.marks == Marks(prefix_hash="h2", recorded_turn=2, recorded_count=2)


def test_a_turn_end_stores_its_lesson_and_how_far_lessons_reach() -> None:
    lesson = Learning(2, ("a",))
    (step,) = decide.completed(_snap(2), 2, None, lesson, learned=2).changes
    assert (step.turn, step.learn, step.meta) == (2, lesson, {"learned": 2})
    (quiet,) = decide.completed(_snap(2), 2, None, None, learned=0).changes
    assert quiet.meta is None and quiet.learn is None


def test_compaction_evicts_then_folds_what_stays_into_the_prefix() -> None:
    meta: SessionMeta = {"selected": True, "prefix": ["old"], "reveals": [[2, ["new"]]]}
    snap = _snap(6, (_tool("old", 1), _tool("new", 2, used=6)), meta)
    evicted, folded = decide.compacted(snap, 6, idle_turns=3, reveal="append").changes
    assert evicted.unloads == [Unload("old", "evicted")]
    assert [e.kind for e in evicted.events] == ["compacted"]
    assert folded.meta == {"prefix": ["new"], "reveals": []}
    assert len(decide.compacted(snap, 6, idle_turns=3, reveal="prefix").changes) == 1


def test_a_used_tool_is_stored_and_an_unlisted_one_loads_as_an_escape() -> None:
    snap = _snap(2, (_tool("a", 1),))
    (listed,) = decide.used(snap, "a", 2, allowed=True).changes
    assert listed.uses == [Use("a", 2)] and not listed.loads
    dec = decide.used(snap, "b", 2, allowed=True)
    (step,) = dec.changes
    assert step.loads == [Load("b", "escape", 2)]
    assert [(e.kind, e.detail) for e in step.events] == [("escape", "unlisted_call")]
    assert dec.notices == (Notice("escape_hatch", 2, ("b",), "unlisted_call"),)
    (refused,) = decide.used(snap, "rm_rf", 2, allowed=False).changes
    assert not refused.uses and [e.kind for e in refused.events] == ["refused"]


@dataclass
class _Chooser:
    """A catalog's pure half: the plan is the scores' picks, and it remembers what it saw."""

    seen: list[tuple[int, bool]]

    def choose(self, snapshot: SessionSnapshot, due: decide.Due, scores: decide.Scores) -> Plan:
        self.seen.append((snapshot.turn, due.first))
        return Plan("selected", list(scores.picks))


def test_a_prepare_is_one_decision_the_move_then_the_scored_plan() -> None:
    snap, conv = _snap(1, meta={"selected": True}, marks=Marks(grown_turn=1)), _conv("a", "b")
    turn = decide.owed(snap, conv, growth="on_new_task")
    assert turn.snap.snapshot.turn == 2 and turn.due is not None and not turn.due.first
    chooser = _Chooser([])
    scores = decide.Scores(picks=[Candidate("maps", "semantic", 0.5)])
    dec = decide.on_prepare(turn, conv, scores, chooser, reveal="prefix")
    moved, grown = dec.changes
    assert moved.turn == 2 and grown.loads == [Load("maps", "semantic", 2, 0.5)]
    assert chooser.seen == [(2, False)]  # the plan reads the session after the move
    assert dec.marks == Marks(grown_turn=2) and dec.plan == Plan("selected", scores.picks)
    assert dec.notices == (Notice("tools_loaded", 2, ("maps",), "semantic"),)


def test_a_scoring_fault_records_the_outage_once_and_still_takes_the_turn() -> None:
    snap, conv = _snap(1, meta={"selected": True}), _conv("a", "b")
    turn = decide.owed(snap, conv, growth="on_new_task")
    assert turn.due is not None
    chooser = _Chooser([])
    first = decide.on_prepare(
        turn, conv, decide.Fault(turn.due.marks, "selection: down"), chooser, ""
    )
    moved, outage = first.changes
    assert moved.turn == 2 and [(e.kind, e.turn, e.detail) for e in outage.events] == [
        ("degraded", 2, "selection: down")
    ]
    again = decide.on_prepare(turn, conv, decide.Fault(turn.due.marks), chooser, "")
    assert len(again.changes) == 1 and again.marks == Marks(grown_turn=2)
    assert not chooser.seen and first.plan is None
    assert decide.on_prepare(turn, conv, None, chooser, "") == turn.moved  # nothing scored
