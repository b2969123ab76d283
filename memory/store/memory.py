"""An in-memory store: the same contract as the database, kept in this process only.

It learns too (:class:`~tooltray.memory.store.records.LearnedTables`), so a trinket on it
reads back what its finished turns taught, as one on a database does.

Built on the store's own change rules (:mod:`tooltray.memory.store.records`), so a session
behaves exactly as it would over SQLite or PostgreSQL, minus durability and sharing. Used when
the loader is off, when the configured database cannot be opened (the agent then runs degraded
rather than stopping), and wherever a test or a short-lived agent needs no file.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.store.records import (
    Changes,
    HistoryEvent,
    LearnClock,
    LearnedMate,
    LearnedTables,
    PastRequest,
    PruneReport,
    SessionInfo,
    SessionSnapshot,
    TurnRecord,
    apply_local,
    empty_snapshot,
    history_rows,
    with_usage,
)


class MemoryStore:
    """A :class:`~tooltray.memory.store.base.BaseStore` held in dictionaries, thread-safe."""

    url = "memory://"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, SessionSnapshot] = {}
        self._history: list[HistoryEvent] = []
        self._turns: dict[tuple[str, int], TurnRecord] = {}
        self._vectors: dict[tuple[str, str], NDArray[np.float32]] = {}
        self._results: dict[str, str] = {}
        self._learned = LearnedTables()

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._sessions)} sessions)"

    def apply(self, session_id: str, changes: Changes | Sequence[Changes]) -> SessionSnapshot:
        """Apply ``changes`` as the database would, guards included; return the result."""
        with self._lock:
            if isinstance(changes, Changes):
                return self._apply(session_id, changes)
            found = [self._apply(session_id, step) for step in changes]
            return (
                found[-1] if found else self._sessions.get(session_id, empty_snapshot(session_id))
            )

    def _apply(self, session_id: str, changes: Changes) -> SessionSnapshot:
        """One step, under the caller's lock."""
        before = self._sessions.get(session_id)
        existed = before is not None
        current = before or empty_snapshot(session_id)
        for embedder_id, vectors in changes.vectors.items():
            self._cache(embedder_id, vectors)
        if changes.skipped(current.meta, existed):
            self._sessions[session_id] = current
            return current
        self._append(history_rows(current, changes))
        if changes.turn_record is not None:
            record = changes.turn_record
            stamped = replace(record, at=record.at or datetime.now(timezone.utc))
            self._turns[(session_id, record.turn)] = stamped
        used = changes.usage
        if used is not None and (session_id, used.turn) in self._turns:
            key = (session_id, used.turn)
            self._turns[key] = with_usage(self._turns[key], used)
        if changes.learn is not None:
            self._learned.learn(session_id, changes.learn)
        after = apply_local(current, changes)
        self._sessions[session_id] = after
        return after

    def _append(self, rows: list[HistoryEvent]) -> None:
        now = datetime.now(timezone.utc)
        start = len(self._history) + 1
        for offset, row in enumerate(rows):
            self._history.append(replace(row, at=row.at or now, id=start + offset))

    def reading(self) -> AbstractContextManager[None]:
        """Nothing to share: every read is of this process's memory."""
        return nullcontext()

    def snapshot(self, session_id: str) -> SessionSnapshot | None:
        """The session as applied so far (``None`` if never written)."""
        with self._lock:
            return self._sessions.get(session_id)

    def history(self, session_id: str, since_id: int | None = None) -> list[HistoryEvent]:
        """The session's history in write order (after ``since_id`` when given)."""
        floor = since_id or 0
        with self._lock:
            return [e for e in self._history if e.session_id == session_id and (e.id or 0) > floor]

    def turns(self, session_id: str) -> list[TurnRecord]:
        """The session's turn records in turn order."""
        with self._lock:
            found = [r for (sid, _), r in self._turns.items() if sid == session_id]
        return sorted(found, key=lambda r: r.turn)

    def sessions(self) -> list[SessionInfo]:
        """Every session, most recently updated first."""
        with self._lock:
            snaps = list(self._sessions.values())
        snaps.sort(key=lambda s: s.updated_at or datetime.min.replace(tzinfo=timezone.utc))
        return [
            SessionInfo(s.session_id, s.turn, s.status, len(s.loaded), s.created_at, s.updated_at)
            for s in reversed(snaps)
        ]

    def get_embeddings(
        self, embedder_id: str, hashes: Sequence[str]
    ) -> dict[str, NDArray[np.float32]]:
        """Cached vectors of ``embedder_id`` for the given content hashes (missing ones absent)."""
        with self._lock:
            found = {h: self._vectors.get((embedder_id, h)) for h in hashes}
        return {h: v.copy() for h, v in found.items() if v is not None}

    def put_embeddings(self, embedder_id: str, vectors: Mapping[str, NDArray[Any]]) -> None:
        """Cache ``vectors`` as float32; already cached hashes are kept."""
        with self._lock:
            self._cache(embedder_id, vectors)

    def _cache(self, embedder_id: str, vectors: Mapping[str, NDArray[Any]]) -> None:
        """Cache ``vectors``, under the caller's lock."""
        for digest, vector in vectors.items():
            key = (embedder_id, digest)
            if key not in self._vectors:
                self._vectors[key] = np.asarray(vector, dtype=np.float32).copy()

    def put_result(self, handle: str, session_id: str, turn: int, tool: str, content: str) -> None:
        """Keep ``content`` under ``handle`` (putting it again replaces it)."""
        with self._lock:
            self._results[handle] = content

    def get_result(self, handle: str) -> str | None:
        """The content kept under ``handle``, or ``None``."""
        with self._lock:
            return self._results.get(handle)

    def learned_mates(
        self, tools: Sequence[str], min_share: float
    ) -> tuple[list[LearnedMate], LearnClock]:
        """Learned co-use mates of ``tools`` and the clock they are read at."""
        with self._lock:
            return self._learned.mates(tools, min_share), self._learned.clock()

    def past_requests(self, after: int) -> tuple[LearnClock, list[PastRequest]]:
        """The clock and the learned turns with a vector after ``after``."""
        with self._lock:
            return self._learned.clock(), self._learned.requests(after)

    def past_searches(self, after: int) -> tuple[LearnClock, list[PastRequest]]:
        """The searches' clock and the learned searches after ``after``."""
        with self._lock:
            return self._learned.searches(after)

    def prune(self, before: datetime) -> PruneReport:
        """Drop history and turn records written before ``before``."""
        with self._lock:
            history = [e for e in self._history if e.at is not None and e.at < before]
            turns = [k for k, r in self._turns.items() if r.at is not None and r.at < before]
            self._history = [e for e in self._history if e not in history]
            for key in turns:
                del self._turns[key]
        return PruneReport(len(history), len(turns))

    def close(self) -> None:
        """Nothing to release: the state stays with this object."""
