"""What a public call decides, as a value: the changes to store, the signals to send after them,
and what this process remembers of the session, computed by pure functions.

They read a :class:`Snap` (the stored session and this process's marks), the conversation and
the catalog's answer, never a store, a journal or a signal: the trinket reads the session, asks
the catalog for scores, calls a rule here, then stores the :class:`Decision` with the call's one
transaction and sends its notices after it. So each rule is tested on hand-made values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any, Literal, Protocol

from tooltray.memory.core.policy import expired_fallbacks, idle_tools
from tooltray.memory.retrieval.scoring import Candidate
from tooltray.memory.store.records import (
    Changes,
    EventKind,
    HistoryEvent,
    Learning,
    Load,
    PinnedMenu,
    SelectionMode,
    SessionMeta,
    SessionSnapshot,
    TurnRecord,
    TurnUsage,
    Unload,
    Use,
    apply_local,
)

NoticeKind = Literal[
    "tools_unloaded",
    "tools_loaded",
    "session_started",
    "session_ended",
    "selection_changed",
    "escape_hatch",
]


@dataclass(frozen=True)
class Notice:
    """A signal to send once the decision is stored: ``detail`` is an unload's reason, a load's
    source or the new prefix hash."""

    kind: NoticeKind
    turn: int
    tools: tuple[str, ...] = ()
    detail: str = ""
    resumed: bool = False


@dataclass(frozen=True)
class Marks:
    """What this process remembers of a session beside the stored snapshot (see
    :class:`~tooltray.memory.core.session.SessionState`)."""

    fallback_turn: int | None = None
    grown_turn: int = -1
    prefix_hash: str | None = None
    recorded_turn: int = -1
    recorded_count: int = -1


@dataclass(frozen=True)
class Decision:
    """Changes stored in order in the call's one transaction, the notices sent after it, and the
    marks the session has then (``None``: unchanged)."""

    changes: tuple[Changes, ...] = ()
    notices: tuple[Notice, ...] = ()
    marks: Marks | None = None
    #: the catalog's plan the decision appends, for the trinket's log line (``None``: none)
    plan: Plan | None = None

    def __add__(self, other: Decision) -> Decision:
        marks = other.marks if other.marks is not None else self.marks
        plan = other.plan if other.plan is not None else self.plan
        return Decision(self.changes + other.changes, self.notices + other.notices, marks, plan)


NOTHING = Decision()


@dataclass(frozen=True)
class Snap:
    """A session as the rules read it: the stored snapshot and this process's marks."""

    snapshot: SessionSnapshot
    marks: Marks = field(default_factory=Marks)

    def event(
        self, kind: EventKind, tool: str | None = None, detail: str | None = None
    ) -> HistoryEvent:
        """A history row of this session at its turn."""
        s = self.snapshot
        return HistoryEvent(s.session_id, s.turn, kind, tool=tool, detail=detail)

    def after(self, decision: Decision) -> Snap:
        """The session once ``decision`` is applied (as the journal applies it locally)."""
        snapshot = self.snapshot
        for changes in decision.changes:
            snapshot = snapshot if changes.empty() else apply_local(snapshot, changes)
        return Snap(snapshot, decision.marks if decision.marks is not None else self.marks)


@dataclass(frozen=True)
class Conversation:
    """What a call's messages say: the user messages' text, oldest first; the turn is their
    number (assistant replies and tool results do not count)."""

    users: tuple[str, ...]
    turn: int

    @classmethod
    def of(cls, messages: Sequence[dict[str, Any]]) -> Conversation:
        """The user messages' text (list-of-parts contents are joined)."""
        out = []
        for m in messages:
            if m.get("role") != "user":
                continue
            content = m.get("content")
            if isinstance(content, list):
                content = " ".join(
                    str(part.get("text", "")) for part in content if isinstance(part, dict)
                )
            out.append(str(content or ""))
        return cls(tuple(out), len(out))


def user_texts(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The user messages' text, oldest first."""
    return list(Conversation.of(messages).users)


@dataclass
class Plan:
    """The catalog's answer for a selection: what to append, and the session's mode."""

    mode: SelectionMode
    loads: list[Candidate] = field(default_factory=list)


@dataclass(frozen=True)
class Due:
    """A selection this turn owes: the first one (start, resume) or growth over ``fresh`` new
    user messages; ``marks`` say the turn's growth is taken, whatever the scoring does."""

    first: bool
    fresh: int
    marks: Marks


@dataclass(frozen=True)
class Growth:
    """What the selector says a later turn may append: its growth candidates and, where a
    reveal is priced, the boundary's picks over the same conversation."""

    grown: list[Candidate] = field(default_factory=list)
    boundary: list[Candidate] | None = None


@dataclass(frozen=True)
class Scores:
    """The catalog's scores for the selection a turn owes, read once before the pure rules:
    the boundary's picks (usage priors in), the chance mass the session needs, the tools its
    skills require, and growth (a later turn's, or what a resumed session grows)."""

    picks: list[Candidate] = field(default_factory=list)
    needs: float = 0.0
    skills: list[str] = field(default_factory=list)
    growth: Growth | None = None


@dataclass(frozen=True)
class Fault:
    """No selection this turn (scoring failed, or a degraded session waits for its next turn):
    the marks the session has then, and an outage's first fault's history detail."""

    marks: Marks
    detail: str | None = None


@dataclass(frozen=True)
class Owed:
    """A turn before it is scored: the counter's move (a fallback of an earlier turn ends), the
    session after it, and the selection it owes (``None``: none)."""

    moved: Decision
    snap: Snap
    due: Due | None


class Chooser(Protocol):
    """What turns scores into a plan (the planner's pure half, over its prepared catalog)."""

    def choose(self, snapshot: SessionSnapshot, due: Due, scores: Scores) -> Plan:
        """The plan ``scores`` call for in ``snapshot``'s session."""
        ...


class Answered(Protocol):
    """What a meta-tool call's decision reads of its outcome
    (:class:`~tooltray.memory.metatools.meta_tools.Outcome` is one)."""

    @property
    def changes(self) -> Changes: ...
    @property
    def added(self) -> list[str]: ...
    @property
    def removed(self) -> list[str]: ...
    @property
    def escape(self) -> str | None: ...
    @property
    def opens_fallback(self) -> bool: ...
    def escape_detail(self) -> str | None: ...


class Shown(Protocol):
    """What a turn record reads of a rendered view (:class:`~.prompt.PromptView` is one)."""

    @property
    def prefix_hash(self) -> str: ...
    @property
    def tool_tokens(self) -> int: ...
    @property
    def eager_tokens(self) -> int: ...
    @property
    def loaded(self) -> tuple[str, ...]: ...


# ----- boundaries -------------------------------------------------------------------------------


def evict(snap: Snap, turn: int, idle_turns: int) -> Decision:
    """Unload the tools idle for ``idle_turns`` (only at a session boundary)."""
    gone = idle_tools(snap.snapshot.loaded, turn, idle_turns)
    notices = (Notice("tools_unloaded", turn, tuple(gone), "evicted"),) if gone else ()
    return Decision((Changes(unloads=[Unload(n, "evicted") for n in gone]),), notices)


def expire_fallback(snap: Snap, turn: int) -> Decision:
    """End the session's fallback: used tools stay as escapes, the others are unloaded."""
    keep, drop = expired_fallbacks(snap.snapshot.loaded, snap.marks.fallback_turn or turn)
    changes = Changes(
        loads=[Load(n, "escape", turn) for n in keep], unloads=[Unload(n) for n in drop]
    )
    notices = (Notice("tools_unloaded", turn, tuple(drop), "fallback-expired"),) if drop else ()
    return Decision((changes,), notices, replace(snap.marks, fallback_turn=None))


def start(snap: Snap, idle_turns: int, *, fresh: bool, menu: PinnedMenu | None = None) -> Decision:
    """Start ``snap``'s session, or resume it (idle tools leave), pinning ``menu`` (the menu
    the session shows until its next boundary); a ``fresh`` start is stored only if no other
    process started it first."""
    turn = snap.snapshot.turn
    resumed = bool(snap.snapshot.loaded) or turn > 0
    dec = evict(snap, turn, idle_turns) if resumed else Decision((Changes(),))
    step = dec.changes[0]
    step.events.append(snap.event("resumed" if resumed else "started"))
    step.meta, step.status, step.only_new = {"selected": False}, "active", fresh
    if menu is not None:
        step.meta["menu"] = menu
    loaded = tuple(snap.after(dec).snapshot.names())
    return dec + Decision(notices=(Notice("session_started", turn, loaded, resumed=resumed),))


def resume(snap: Snap, turn: int, idle_turns: int, menu: PinnedMenu | None = None) -> Decision:
    """An explicit resume at ``turn`` (the conversation's): the counter, then the boundary."""
    moved = Decision((Changes(turn=turn),)) if turn > snap.snapshot.turn else NOTHING
    return moved + start(snap.after(moved), idle_turns, fresh=False, menu=menu)


def advance(snap: Snap, turn: int) -> Decision:
    """A new user turn: the counter moves, and a fallback of an earlier turn ends."""
    if turn <= snap.snapshot.turn:
        return NOTHING
    ends = snap.marks.fallback_turn is not None and snap.marks.fallback_turn < turn
    dec = expire_fallback(snap, turn) if ends else Decision((Changes(),))
    dec.changes[0].turn = turn
    return dec


def compacted(
    snap: Snap, turn: int, idle_turns: int, reveal: str, menu: PinnedMenu | None = None
) -> Decision:
    """The context was compacted: a boundary where idle tools leave, ``menu`` is pinned and
    (revealing by appending) the loaded set becomes the prefix."""
    dec = evict(snap, turn, idle_turns)
    dec.changes[0].events.append(snap.event("compacted"))
    dec.changes[0].meta = {"menu": menu} if menu is not None else None
    after = snap.after(dec)
    if reveal != "append" or not after.snapshot.meta.get("selected"):
        return dec
    return dec + Decision((Changes(meta=new_prefix(after.snapshot.names())),))


def ended(snap: Snap) -> Decision:
    """The agent closed the session; its state stays stored for a later resume."""
    changes = Changes(status="ended", events=[snap.event("ended")])
    return Decision((changes,), (Notice("session_ended", snap.snapshot.turn),))


def completed(
    snap: Snap, turn: int, usage: TurnUsage | None, learn: Learning | None, learned: int
) -> Decision:
    """A turn ended: the fallback ends, its usage and (``learn``) its lesson are stored."""
    dec = expire_fallback(snap, turn)
    step = dec.changes[0]
    step.turn, step.usage, step.learn = turn, usage, learn
    if learn is not None:
        step.meta = {**(step.meta or {}), "learned": learned}
    return dec


def used(snap: Snap, tool: str, turn: int, allowed: bool) -> Decision:
    """The model called ``tool``: its use is stored; a tool outside the loaded set loads as an
    escape (an unlisted call); one not allowed is only recorded as refused."""
    if not allowed:
        why = "reported as used, but unknown or not in the allow-list"
        return Decision((Changes(events=[snap.event("refused", tool[:64], why)]),))
    changes = Changes(uses=[Use(tool, turn)])
    if tool in snap.snapshot.names():
        return Decision((changes,))
    changes.loads.append(Load(tool, "escape", turn))
    changes.events.append(snap.event("escape", tool, "unlisted_call"))
    return Decision((changes,), (Notice("escape_hatch", turn, (tool,), "unlisted_call"),))


# ----- meta-tools -------------------------------------------------------------------------------


def meta(snap: Snap, out: Answered) -> Decision:
    """A meta-tool's outcome as a decision: its changes (an escape's history row added), the
    signals of what it loaded or unloaded, and, for a fallback, the turn's fallback mark."""
    turn, changes, notices = snap.snapshot.turn, out.changes, []
    detail = out.escape_detail()
    if detail is not None:
        changes = replace(changes, events=[*changes.events, snap.event("escape", None, detail)])
    if out.added:
        kind = "fallback" if out.escape == "fallback" else "load_tools"
        source = "fallback" if kind == "fallback" else "escape"
        notices.append(Notice("tools_loaded", turn, tuple(out.added), source))
        notices.append(Notice("escape_hatch", turn, tuple(out.added), kind))
    if out.removed:
        notices.append(Notice("tools_unloaded", turn, tuple(out.removed), "unloaded"))
    marks = replace(snap.marks, fallback_turn=turn) if out.opens_fallback else None
    return Decision((changes,), tuple(notices), marks)


def refused_meta(snap: Snap, name: str, why: str) -> Decision:
    """A meta-tool call refused for its name or its arguments: only its history row."""
    return Decision((Changes(events=[snap.event("refused", name, why)]),))


# ----- selection --------------------------------------------------------------------------------


def owed(snap: Snap, conv: Conversation, growth: str) -> Owed:
    """The turn's move (:func:`advance`) and the selection it then owes (:func:`due`): what the
    catalog is asked to score."""
    moved = advance(snap, conv.turn)
    after = snap.after(moved)
    return Owed(moved, after, due(after, conv, growth))


def on_prepare(
    turn: Owed, conv: Conversation, scores: Scores | Fault | None, chooser: Chooser, reveal: str
) -> Decision:
    """A ``prepare``'s one decision before its view: the move, then the plan the scores call for
    appended (:func:`select`), or, on a fault, no selection and the outage's history row."""
    if isinstance(scores, Fault):
        detail = scores.detail
        rows = (Changes(events=[turn.snap.event("degraded", None, detail)]),) if detail else ()
        return turn.moved + Decision(rows, (), scores.marks)
    if turn.due is None or scores is None:
        return turn.moved
    plan = chooser.choose(turn.snap.snapshot, turn.due, scores)
    chosen = Decision(marks=turn.due.marks, plan=plan)
    return turn.moved + chosen + select(turn.snap, conv, turn.due, plan, reveal)


def due(snap: Snap, conv: Conversation, growth: str) -> Due | None:
    """The selection this turn owes, if any: the first one, else growth once a turn on a new
    user message (never with ``growth = "never"``)."""
    turn, grown = snap.snapshot.turn, snap.marks.grown_turn
    first = not snap.snapshot.meta.get("selected")
    if not first and (growth == "never" or not conv.users or grown == turn):
        return None
    return Due(first, turn - max(grown, 0), replace(snap.marks, grown_turn=turn))


def select(snap: Snap, conv: Conversation, due: Due, plan: Plan, reveal: str) -> Decision:
    """The plan's loads appended at this turn, with the meta that makes the step once-only (a
    restart mid-turn must not select or grow the turn again) and where they show."""
    turn, names = snap.snapshot.turn, list(map(attrgetter("name"), plan.loads))
    changes = Changes(loads=[Load(c.name, c.source, turn, c.score) for c in plan.loads])
    changes.meta = {"grown": turn}
    changes.unless = {"selected": True} if due.first else {"grown": turn}
    if due.first and conv.users:
        changes.meta = {"selected": True, "mode": plan.mode, "grown": turn}
        changes.events.append(snap.event("selected", None, plan.mode))
    changes.meta.update(reveal_meta(snap, names, due.first, reveal))
    loaded = (Notice("tools_loaded", turn, tuple(names), plan.loads[0].source),) if names else ()
    return Decision((changes,), loaded)


def followed(snap: Snap, picks: Sequence[Candidate], reveal: str) -> Decision:
    """What the tools a session just called point to, appended at its turn like a later turn's
    growth (for a client that sends no user text between calls: an MCP gateway)."""
    turn, names = snap.snapshot.turn, [c.name for c in picks]
    meta = reveal_meta(snap, names, False, reveal) or None
    changes = Changes(loads=[Load(c.name, c.source, turn, c.score) for c in picks], meta=meta)
    return Decision((changes,), (Notice("tools_loaded", turn, tuple(names), picks[0].source),))


def reveal_meta(snap: Snap, names: list[str], first: bool, reveal: str) -> SessionMeta:
    """Where a plan's loads go with ``reveal = "append"``: a boundary's make the prefix (what is
    loaded, then the loads); a later turn's are revealed before its message."""
    if reveal != "append":
        return {}
    if first:
        return new_prefix(snap.snapshot.names() + names)
    if not names:
        return {}
    before = stored_reveals(snap.snapshot.meta.get("reveals"))
    return {"reveals": [*map(list, before), [snap.snapshot.turn, names]]}


def new_prefix(names: list[str]) -> SessionMeta:
    """A boundary's meta change: ``names`` make the prefix, and no reveal stands after it."""
    return {"prefix": names, "reveals": []}


def stored_reveals(raw: object) -> list[tuple[int, list[str]]]:
    """The session meta's ``reveals`` as ``(user turn, names)``; malformed rows are skipped."""
    out: list[tuple[int, list[str]]] = []
    for row in raw if isinstance(raw, list) else []:
        if isinstance(row, (list, tuple)) and len(row) == 2 and isinstance(row[0], int):
            names = [n for n in row[1] if isinstance(n, str)] if isinstance(row[1], list) else []
            out.append((row[0], names))
    return out


# ----- the view handed out ----------------------------------------------------------------------


def record_turn(snap: Snap, view: Shown) -> Decision:
    """The ``turns`` row ``view`` calls for (one per turn, again when its prefix or its loaded
    count changed), and ``selection-changed`` when the prefix differs from the last handed out."""
    m, count, turn = snap.marks, len(view.loaded), snap.snapshot.turn
    same = view.prefix_hash == m.prefix_hash
    if same and m.recorded_count == count and m.recorded_turn == turn:
        return NOTHING
    marks = replace(m, prefix_hash=view.prefix_hash, recorded_turn=turn, recorded_count=count)
    record = TurnRecord(
        snap.snapshot.session_id, turn, view.prefix_hash, view.tool_tokens, count, view.eager_tokens
    )
    changed = not same and m.prefix_hash is not None
    notices = (Notice("selection_changed", turn, detail=view.prefix_hash),) if changed else ()
    return Decision((Changes(turn_record=record),), notices, marks)
