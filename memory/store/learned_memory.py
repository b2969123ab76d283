"""The learned tables' rules without SQL: what a turn teaches, and the same tables in memory.

:mod:`tooltray.memory.store.learned` applies these rules in the turn's SQL transaction; the
in-memory store keeps :class:`LearnedTables`, so a session on it learns and reads back exactly
as one on SQLite or PostgreSQL would (decayed weights, epoch rescale, bounds), minus sharing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tooltray.memory.store.records import (
    LearnClock,
    LearnedMate,
    Learning,
    PastRequest,
)

REBASE_AT = 512.0
"""Exponent (in half-lives) at which every weight is rescaled; 2**512 is far from overflow."""
KEEP_SHARE = 0.9
"""Share of ``max_pairs`` an over-full pairs table is cut back to (the weakest rows go)."""


def pairs(tools: list[str], previous: list[str]) -> list[tuple[str, str]]:
    """(tool, mate) pairs one turn teaches: each tool with itself, same-turn mates both ways,
    and previous-turn tools both ways (a token fetched one turn, used the next)."""
    out: set[tuple[str, str]] = set()
    for a in tools:
        out.add((a, a))
        out.update((a, b) for b in tools if b != a)
        for b in previous:
            if b not in tools:
                out.update({(a, b), (b, a)})
    return sorted(out)  # one lock order for every writer (no deadlocks on PostgreSQL)


def every(cap: int) -> int:
    """How many learned turns apart a bound is enforced: up to 64, so a cap overshoots by <2%."""
    return max(1, min(64, cap // 64))


@dataclass
class _Request:
    session_id: str
    turn: int
    row: PastRequest


class LearnedTables:
    """``learn_pairs`` and ``learn_requests`` in this process (the caller holds the lock)."""

    def __init__(self) -> None:
        self._pairs: dict[tuple[str, str], float] = {}
        self._requests: dict[int, _Request] = {}
        self._by_turn: dict[tuple[str, int], int] = {}
        self._last_id = 0
        self._epoch = 0

    def learn(self, session_id: str, lesson: Learning) -> None:
        """Teach ``lesson`` once per (session, turn), as :func:`~.learned.learn_turn` does."""
        tools = sorted(set(lesson.tools))
        if not tools or (session_id, lesson.turn) in self._by_turn:
            return
        previous = self._requests.get(self._by_turn.get((session_id, lesson.turn - 1), -1))
        row_id = self._insert(session_id, lesson, tools)
        if (row_id - self._epoch) / lesson.half_life >= REBASE_AT:
            factor = 2.0 ** (-(row_id - self._epoch) / lesson.half_life)
            self._pairs = {k: w * factor for k, w in self._pairs.items()}
            self._epoch = row_id
        weight = 2.0 ** ((row_id - self._epoch) / lesson.half_life)
        for key in pairs(tools, list(previous.row.tools) if previous else []):
            self._pairs[key] = self._pairs.get(key, 0.0) + weight
        self._bound(row_id, lesson)

    def _insert(self, session_id: str, lesson: Learning, tools: list[str]) -> int:
        self._last_id += 1
        dim = len(lesson.vector) // 4 if lesson.vector is not None else None
        row = PastRequest(self._last_id, tuple(tools), dim, lesson.vector, session_id)
        self._requests[row.id] = _Request(session_id, lesson.turn, row)
        self._by_turn[(session_id, lesson.turn)] = row.id
        return row.id

    def _bound(self, row_id: int, lesson: Learning) -> None:
        if row_id % every(lesson.max_requests) == 0:
            for old in [i for i in self._requests if i <= row_id - lesson.max_requests]:
                gone = self._requests.pop(old)
                del self._by_turn[(gone.session_id, gone.turn)]
        if row_id % every(lesson.max_pairs) == 0 and len(self._pairs) > lesson.max_pairs:
            weights = sorted(self._pairs.values(), reverse=True)
            cut = weights[int(lesson.max_pairs * KEEP_SHARE)]
            self._pairs = {k: w for k, w in self._pairs.items() if w > cut}

    def clock(self) -> LearnClock:
        """Newest and oldest learned ids (0 while none) and the weights' epoch."""
        ids = self._requests.keys()
        return LearnClock(max(ids, default=0), min(ids, default=0), self._epoch)

    def mates(self, tools: Sequence[str], min_share: float) -> list[LearnedMate]:
        """The mates of ``tools`` with at least ``min_share`` of the tool's own weight."""
        asked = set(tools)
        out = []
        for (tool, mate), weight in self._pairs.items():
            own = self._pairs.get((tool, tool))
            if tool in asked and mate != tool and own is not None and weight >= min_share * own:
                out.append(LearnedMate(tool, mate, weight, own))
        return out

    def requests(self, after: int) -> list[PastRequest]:
        """Rows with a vector and an id above ``after``, oldest first."""
        rows = (r.row for i, r in sorted(self._requests.items()) if i > after)
        return [row for row in rows if row.vector is not None]
