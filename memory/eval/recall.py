"""Tool recall from the stored history: was every tool the model called loaded when it called it?

This is the merge gate of the design ("tool recall ~100%"), measured without hand labels: the
tools the agent actually called (``used`` rows) are the needed set, and the history says what was
loaded at that moment. Rows are replayed in id (write) order, per session:

* ``loaded`` / ``fallback`` rows add a tool, ``unloaded`` / ``evicted`` rows remove it;
* a ``used`` row is a **hit** when the tool was loaded before the model acted in that turn
  (selection, growth, or an earlier turn's load), **recovered** when it was loaded in the same
  turn by an escape (``load_tools``, ``fallback``, or an unlisted call the trinket auto-loaded
  before recording the use), and a **miss** when nothing had loaded it;
* after a ``degraded`` row every tool was exposed, so later uses are hits.

A turn passes when it has no miss; recall is the share of turns with tool calls that pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tooltray.memory.metatools.meta_tools import META_TOOL_NAMES
from tooltray.memory.store import HistoryEvent, Store
from tooltray.tools.errors import StoreError

Status = Literal["hit", "recovered", "miss"]
_SELECTED = "selected"
_ESCAPE_SOURCES = ("escape",)


@dataclass(frozen=True)
class ToolCall:
    """One recorded use and whether the tool was callable: ``via`` names the recovery."""

    tool: str
    status: Status
    via: str | None = None


@dataclass
class TurnRecall:
    """The uses of one turn and the escape hatches that fired in it."""

    session_id: str
    turn: int
    calls: list[ToolCall] = field(default_factory=list)
    escapes: int = 0

    @property
    def ok(self) -> bool:
        """True when every tool called in the turn was callable (hit or recovered)."""
        return all(c.status != "miss" for c in self.calls)

    @property
    def first_pass(self) -> bool:
        """True when every tool called was loaded before the model acted."""
        return all(c.status == "hit" for c in self.calls)

    def named(self, status: Status) -> list[str]:
        """Tools of this turn with ``status`` (recovered ones as ``tool (via)``)."""
        out = []
        for c in self.calls:
            if c.status == status:
                out.append(f"{c.tool} ({c.via})" if c.via else c.tool)
        return out


@dataclass
class SessionRecall:
    """One session's turns with activity, and its turn counter (for the escape rate)."""

    session_id: str
    turns: int
    per_turn: list[TurnRecall] = field(default_factory=list)

    @property
    def escapes(self) -> int:
        """Escape-hatch activations over the whole session."""
        return sum(t.escapes for t in self.per_turn)


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


@dataclass
class RecallReport:
    """Recall over sessions, with the numbers the gate and the tuning dial need."""

    sessions: list[SessionRecall]

    def called_turns(self) -> list[TurnRecall]:
        """Turns in which at least one real tool was used."""
        return [t for s in self.sessions for t in s.per_turn if t.calls]

    def summary(self) -> dict[str, Any]:
        """Recall (after recovery), first-pass recall, per-use shares and the escape rate."""
        turns = self.called_turns()
        calls = [c for t in turns for c in t.calls]
        total_turns = sum(s.turns for s in self.sessions)
        escapes = sum(s.escapes for s in self.sessions)
        return {
            "sessions": len(self.sessions),
            "turns": total_turns,
            "turns_with_calls": len(turns),
            "calls": len(calls),
            "recall": _ratio(sum(t.ok for t in turns), len(turns)),
            "first_pass_recall": _ratio(sum(t.first_pass for t in turns), len(turns)),
            "tool_recall": _ratio(sum(c.status != "miss" for c in calls), len(calls)),
            "tool_first_pass_recall": _ratio(sum(c.status == "hit" for c in calls), len(calls)),
            "misses": sum(c.status == "miss" for c in calls),
            "recovered": sum(c.status == "recovered" for c in calls),
            "escapes": escapes,
            "escape_rate": _ratio(escapes, total_turns),
        }

    def passed(self, min_recall: float) -> bool:
        """True when recall reaches ``min_recall`` (no tool calls at all passes vacuously)."""
        recall = self.summary()["recall"]
        return recall is None or recall >= min_recall - 1e-12


class _Replay:
    """Walks one session's history rows in id order, keeping the loaded set as it was."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.loaded: dict[str, tuple[int, str]] = {}
        self.turns: dict[int, TurnRecall] = {}
        self.unlisted: set[tuple[int, str]] = set()
        self.pending: list[tuple[TurnRecall, int, str]] = []
        self.degraded = False

    def turn(self, number: int) -> TurnRecall:
        return self.turns.setdefault(number, TurnRecall(self.session_id, number))

    def feed(self, event: HistoryEvent) -> None:
        tool = event.tool or ""
        if event.kind == "loaded" and tool:
            how = "escape" if event.source in _ESCAPE_SOURCES else _SELECTED
            self.loaded[tool] = (event.turn, how)
        elif event.kind == "fallback" and tool:
            self.loaded[tool] = (event.turn, "fallback")
        elif event.kind in ("unloaded", "evicted"):
            self.loaded.pop(tool, None)
        elif event.kind == "degraded":
            self.degraded = True
        elif event.kind == "escape":
            self.turn(event.turn).escapes += 1
            if event.detail == "unlisted_call" and tool:
                self.unlisted.add((event.turn, tool))
        elif event.kind == "used" and tool and tool not in META_TOOL_NAMES:
            self.use(event.turn, tool)

    def use(self, turn: int, tool: str) -> None:
        record = self.turn(turn)
        held = self.loaded.get(tool)
        if self.degraded:
            record.calls.append(ToolCall(tool, "hit"))
        elif held is None:
            record.calls.append(ToolCall(tool, "miss"))
        elif held[1] == _SELECTED or held[0] != turn:
            record.calls.append(ToolCall(tool, "hit"))
        else:
            self.pending.append((record, len(record.calls), held[1]))
            record.calls.append(ToolCall(tool, "recovered", held[1]))

    def finish(self, turns: int) -> SessionRecall:
        for record, index, how in self.pending:  # escape rows follow the use they explain
            call = record.calls[index]
            via = "fallback" if how == "fallback" else "load_tools"
            if (record.turn, call.tool) in self.unlisted:
                via = "unlisted_call"
            record.calls[index] = ToolCall(call.tool, "recovered", via)
        per_turn = [self.turns[n] for n in sorted(self.turns)]
        return SessionRecall(self.session_id, turns, per_turn)


def replay_session(session_id: str, events: Iterable[HistoryEvent], turns: int) -> SessionRecall:
    """Recall of one session from its history rows (sorted by id here, whatever the input order).

    Args:
        session_id: the session the rows belong to.
        events: its history rows (``Store.history``).
        turns: the session's turn counter, the denominator of the escape rate.
    """
    replay = _Replay(session_id)
    for event in sorted(events, key=lambda e: e.id if e.id is not None else 0):
        replay.feed(event)
    return replay.finish(turns)


def evaluate_store(store: Store, sessions: Sequence[str] = ()) -> RecallReport:
    """Recall of the named sessions (all stored sessions when none are named).

    Raises:
        StoreError: a named session is not in the store.
    """
    known = {s.session_id: s.turn for s in store.sessions()}
    missing = [s for s in sessions if s not in known]
    if missing:
        raise StoreError(
            f"no session {', '.join(map(repr, missing))} in the store: list them with "
            "`tooltray sql 'SELECT id, turn FROM sessions'`"
        )
    chosen = list(dict.fromkeys(sessions)) if sessions else sorted(known)
    return RecallReport([replay_session(sid, store.history(sid), known[sid]) for sid in chosen])
