"""The trinket's write path: apply each change here at once, store it in order, queue it
through outages.

Every change is applied to the live state first (:func:`apply_local`), so the turn goes on
whatever the database does; then everything not yet stored goes to the store in order, in one
transaction. Inside :meth:`Journal.call` (one public call of the trinket) commits only stage
their changes: the call computes first and stores its whole change set in one transaction at the
end, and the signals it announced fire after that, so a receiver reads what the call stored.
While the database is down the changes wait in ``state.pending`` and are replayed, in order, by
the first commit that reaches it. Tool-used records are applied at once but stored with the
next commit (:meth:`Journal.defer`): a burst of calls costs no transaction of its own, and a
crash loses at most the turn in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from blinker import NamedSignal
from pydantic import BaseModel

from tooltray.events import signals as sig
from tooltray.memory.core import outages
from tooltray.memory.core.session import SessionState
from tooltray.memory.store.base import BaseStore
from tooltray.memory.store.records import Changes, SessionSnapshot, apply_local, empty_snapshot
from tooltray.tools.errors import StoreError

StartLate = Callable[[SessionState], None]
Announcement = tuple[NamedSignal, str, BaseModel]


class Journal:
    """Stores one trinket's changes, session by session, surviving database outages.

    Args:
        store: where changes go (a database, or the in-memory store).
        start_late: starts a session that an outage hid and that turned out to be new.
    """

    def __init__(self, store: BaseStore, start_late: StartLate) -> None:
        self.store = store
        self._start_late = start_late
        self._touched: list[SessionState] | None = None
        self._announced: list[Announcement | Callable[[], Any]] = []
        self._vectors: dict[str, dict[str, Any]] = {}

    @contextmanager
    def call(self) -> Iterator[None]:
        """One public call: its commits are stored in one transaction at the end, then announced.

        Nested calls (a receiver of a signal the call itself emits) join the outer one.
        """
        if self._touched is not None:
            yield
            return
        self._touched = []
        try:
            yield
        finally:
            touched, self._touched = self._touched, None
            self._stage_vectors(touched)
            for state in touched:
                self._store(state)
            self._announce()

    def get_embeddings(self, embedder_id: str, hashes: Sequence[str]) -> Mapping[str, Any]:
        """Cached document vectors (the journal is the planner's embedding cache)."""
        return self.store.get_embeddings(embedder_id, hashes)

    def put_embeddings(self, embedder_id: str, vectors: Mapping[str, Any]) -> None:
        """Cache document vectors: inside :meth:`call` with the call's one transaction."""
        if self._touched is None:
            self.store.put_embeddings(embedder_id, vectors)
        else:
            self._vectors.setdefault(embedder_id, {}).update(vectors)

    def _stage_vectors(self, touched: list[SessionState]) -> None:
        """Put the call's vectors in its first session's change set (stored at once without one)."""
        staged, self._vectors = self._vectors, {}
        if not staged:
            return
        if not touched:
            for embedder_id, vectors in staged.items():
                self.store.put_embeddings(embedder_id, vectors)
            return
        state = touched[0]
        if not state.pending:
            state.pending.append(Changes())
        last = state.pending[-1]
        for embedder_id, vectors in staged.items():
            last.vectors.setdefault(embedder_id, {}).update(vectors)

    def announce(self, signal: NamedSignal, session_id: str, payload: BaseModel) -> None:
        """Emit ``payload`` once the open call is stored (at once outside a call)."""
        self._announced.append((signal, session_id, payload))
        if self._touched is None:
            self._announce()

    def after(self, step: Callable[[], Any]) -> None:
        """Run ``step`` once the open call is stored (at once outside a call)."""
        self._announced.append(step)
        if self._touched is None:
            self._announce()

    def _announce(self) -> None:
        while self._announced:
            item = self._announced.pop(0)
            if callable(item):
                item()
            else:
                sig.emit(*item)

    def fetch(self, session_id: str) -> SessionSnapshot | None:
        """The stored session; raises StoreError when the database cannot be asked."""
        return self.store.snapshot(session_id)

    def read(self, session_id: str) -> SessionSnapshot | None:
        """The stored session, or ``None`` when it is absent or cannot be read (logged)."""
        try:
            return self.fetch(session_id)
        except StoreError as exc:
            outages.warn(SessionState(session_id, empty_snapshot(session_id)), "store", exc)
            return None

    def commit(self, state: SessionState, changes: Changes) -> None:
        """Apply locally, then store everything not yet stored (deferred uses first), in order.

        Inside :meth:`call` the change is only staged: the call stores it with the rest.
        """
        if state.deferred is not None:
            state.pending.append(state.deferred)
            state.deferred = None
        if not changes.empty():
            state.snapshot = apply_local(state.snapshot, changes)
            state.pending.append(changes)
        if self._touched is None:
            self._store(state)
        elif all(s is not state for s in self._touched):
            self._touched.append(state)

    def _store(self, state: SessionState) -> None:
        """Store the pending changes in one transaction; they stay queued when it fails."""
        if state.deferred is not None:
            state.pending.append(state.deferred)
            state.deferred = None
        if not state.pending or (state.unread and not self._reread(state)):
            return
        try:
            stored = self.store.apply(state.session_id, list(state.pending))
        except StoreError as exc:
            outages.warn(state, "store", exc)
            return
        state.pending.clear()
        state.snapshot = stored
        outages.recovered(state, "store")

    def defer(self, state: SessionState, changes: Changes) -> None:
        """Apply tool-used changes now and store them with the next commit (turn end at latest)."""
        state.snapshot = apply_local(state.snapshot, changes)
        merged = state.deferred or Changes()
        merged.loads += changes.loads
        merged.uses += changes.uses
        merged.events += changes.events
        merged.turn = max(merged.turn or 0, changes.turn or 0) or None
        state.deferred = merged

    def unread(self, session_id: str, exc: StoreError) -> SessionState:
        """A session the database cannot be asked about (say, after a restart): all tools for now.

        Taking it for a new session would start and select a stored session a second time once
        the database is back; instead its changes wait in ``pending`` and :meth:`_reread` lays
        them over the stored state as soon as the database answers.
        """
        state = SessionState(session_id, empty_snapshot(session_id), health="degraded", unread=True)
        outages.warn(state, "store", exc)
        return state

    def _reread(self, state: SessionState) -> bool:
        """Read the session the outage hid; False while the database still cannot be asked."""
        try:
            stored = self.store.snapshot(state.session_id)
        except StoreError as exc:
            outages.warn(state, "store", exc)
            return False
        state.unread = False
        if stored is None:
            self._begin(state)
            return True
        for changes in state.pending:
            stored = apply_local(stored, changes)
        state.snapshot = stored
        return True

    def _begin(self, state: SessionState) -> None:
        """The unread session was new after all: start it, then store what was queued."""
        queued, state.pending = state.pending, []
        state.snapshot = empty_snapshot(state.session_id)
        self._start_late(state)
        for changes in queued:
            state.snapshot = apply_local(state.snapshot, changes)
        state.pending += queued
