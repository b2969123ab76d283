"""A session's tools over its turns, replayed from the history rows: what the picture draws.

Rows are written in id order, so replaying them gives, per tool, the turns it was loaded (a span
from its ``loaded`` row to the ``unloaded`` / ``evicted`` row that ended it), the turns it was
used, whether an escape hatch brought it in, and when it was evicted. Tools that a ``fallback``
exposed for one turn and that were never used are counted per turn, not drawn one by one: they are
the whole catalog, and would bury the tools that matter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tooltray.memory.report.summary import prefix_changes
from tooltray.memory.store import HistoryEvent, Store, TurnRecord

SELECTED = "selected"


@dataclass
class ToolRow:
    """One tool's life in the session; turns are 1-based, spans inclusive (``None``: still loaded).

    Each span keeps the source that loaded the tool that time (a tool evicted and picked again
    later can come back for another reason).
    """

    name: str
    spans: list[tuple[int, int | None, str]] = field(default_factory=list)
    used: set[int] = field(default_factory=set)
    escapes: set[int] = field(default_factory=set)
    evicted: set[int] = field(default_factory=set)

    def close(self, turn: int) -> None:
        """End the open span at ``turn`` (the last turn the tool was callable)."""
        if self.spans and self.spans[-1][1] is None:
            self.spans[-1] = (self.spans[-1][0], turn, self.spans[-1][2])

    @property
    def open(self) -> bool:
        """True while the tool is loaded."""
        return bool(self.spans) and self.spans[-1][1] is None


@dataclass
class Timeline:
    """Everything the session picture shows."""

    session_id: str
    turns: int
    rows: list[ToolRow]
    fallback: dict[int, int]
    records: list[TurnRecord]
    prefix_changes: list[int]


class _Replay:
    def __init__(self) -> None:
        self.rows: dict[str, ToolRow] = {}
        self.fallback: dict[int, int] = {}
        self.fell_back: set[tuple[int, str]] = set()

    def row(self, tool: str) -> ToolRow:
        return self.rows.setdefault(tool, ToolRow(tool))

    def feed(self, e: HistoryEvent) -> None:
        tool = e.tool or ""
        if e.kind == "loaded" and tool:
            row = self.row(tool)
            if not row.open:
                kept = (e.turn, tool) in self.fell_back  # a fallback tool used, so kept
                source = "fallback" if kept else e.source
                row.spans.append((max(e.turn, 1), None, source or SELECTED))
            if e.source == "escape":
                row.escapes.add(max(e.turn, 1))
        elif e.kind == "fallback" and tool:
            self.fallback[e.turn] = self.fallback.get(e.turn, 0) + 1
            self.fell_back.add((e.turn, tool))
        elif e.kind in ("unloaded", "evicted") and tool in self.rows:
            self.rows[tool].close(e.turn)
            if e.kind == "evicted":
                self.rows[tool].evicted.add(e.turn)
        elif e.kind == "used" and tool:
            self.row(tool).used.add(e.turn)


def build_timeline(store: Store, session_id: str) -> Timeline:
    """Replay ``session_id`` from the store into a :class:`Timeline`."""
    snapshot = store.snapshot(session_id)
    replay = _Replay()
    for event in sorted(store.history(session_id), key=lambda e: e.id or 0):
        replay.feed(event)
    records = store.turns(session_id)
    turns = max([snapshot.turn if snapshot else 0] + [r.turn for r in records])
    rows = sorted(replay.rows.values(), key=lambda r: r.spans[0][0] if r.spans else turns + 1)
    return Timeline(session_id, turns, rows, replay.fallback, records, prefix_changes(records))
