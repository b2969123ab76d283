"""A session in this process: its state, its outages, and the journal that stores what each
public call changes.

Every change is applied to the live state at once, so the turn goes on whatever the database does;
one public call (:meth:`Journal.call`) then stores its whole change set in one transaction at its
end and fires its signals after it, so a receiver reads what the call stored. While the database is
down the changes wait in ``state.pending`` and are replayed in order by the first commit that
reaches it; each outage is logged loudly once and said to be over once. A tool-used record is
stored when it is received, in its own small transaction (or with the open call's), so a kill
right after a tool ran loses no use. A change that can never be stored is dropped alone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from blinker import NamedSignal
from pydantic import BaseModel

from tooltray.events import payloads as p
from tooltray.events import signals as sig
from tooltray.memory.core.decision import Marks, Notice, Snap, user_texts
from tooltray.memory.store.base import BaseStore
from tooltray.memory.store.records import (
    Changes,
    SelectionMode,
    SessionSnapshot,
    apply_local,
    empty_snapshot,
)
from tooltray.memory.store.store import is_transient
from tooltray.tools.errors import StoreDataError, StoreError

Health = Literal["ok", "degraded", "disabled"]
"""Whether the loader works for a session: ``ok``; ``degraded`` (a fault: every tool is shown
until it passes); ``disabled`` (loader or memory switched off: every tool, silently)."""

ViewMode = Literal["selected", "all", "degraded", "disabled"]
"""What a prompt shows: a selection, everything because the catalog is small (``all``), or
everything because the loader is degraded or disabled."""

MODE_SELECTED: SelectionMode = "selected"
MODE_ALL: SelectionMode = "all"


def grown_turn(snapshot: SessionSnapshot) -> int:
    """The last turn whose growth is stored (``-1``: none), so a restart does not redo it."""
    return _counter(snapshot.meta.get("grown"), -1)


def learned_upto(snapshot: SessionSnapshot) -> int:
    """How many user messages stored lessons covered (``0``: none), kept across restarts."""
    return _counter(snapshot.meta.get("learned"), 0)


def _counter(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def user_turn(messages: Sequence[dict[str, Any]]) -> int:
    """The turn a conversation is at: its number of user messages (the one meaning of "turn").

    Assistant replies and tool results do not count, so a turn with three tool calls is still
    one turn, and idle eviction (``idle_turns``) and a fallback's one-turn life count user turns.
    """
    return len(user_texts(messages))


@dataclass
class SessionState:
    """What the trinket keeps in memory for one live session.

    Attributes:
        snapshot: the loaded set and counters as last stored (or applied locally).
        health: ``ok``, ``degraded`` or ``disabled`` (see :data:`Health`); what selection
            decided (``selected`` or ``all``) is stored in the snapshot's meta instead.
        marks: what this process remembers beside the snapshot: the turn a ``fallback`` is
            active for, the last turn grown (once per turn), and the prefix hash, turn and
            loaded count of the last ``turns`` row (revealed tools change the count mid-turn
            while the prefix stays, and the row must end as an uninterrupted run's would).
        pending: changes the store could not take yet, replayed in order when it is back.
        warned: reasons logged loudly in the current outage (cleared when it ends, so that a
            later outage is logged again).
        unread: the store could not be read when this state was made: it is not known yet
            whether the session is stored (see :meth:`Journal.unread`).
        taught: allowed tools used since the last turn end (what the turn teaches; learning on).
        user_texts: the conversation's user messages at the last prepare (learning on). At turn
            end the planner embeds the one among them that asked for the tools; never stored
            unless ``learn_keep_text``.
        learned_upto: how many of ``user_texts`` earlier lessons covered (those after it are
            the messages since the last turn that used tools).
        searches: the ``load_tools`` queries since the last lesson, each with the tools known
            when it was asked (loaded or used): its lesson pairs it with the tools used after
            it (learning on; lost on a restart, as they are not stored before the lesson).
    """

    session_id: str
    snapshot: SessionSnapshot
    health: Health = "ok"
    marks: Marks = field(default_factory=Marks)
    pending: list[Changes] = field(default_factory=list)
    warned: set[str] = field(default_factory=set)
    unread: bool = False
    taught: list[str] = field(default_factory=list)
    user_texts: list[str] = field(default_factory=list)
    learned_upto: int = 0
    searches: list[tuple[str, frozenset[str]]] = field(default_factory=list)

    @property
    def selection_mode(self) -> SelectionMode:
        """What the stored selection decided: a ``selected`` subset or ``all`` tools."""
        return self.snapshot.meta.get("mode", MODE_SELECTED)

    @property
    def selected(self) -> bool:
        """Whether the session's first selection is stored."""
        return bool(self.snapshot.meta.get("selected"))

    @property
    def turn(self) -> int:
        """The session's turn counter."""
        return self.snapshot.turn

    @property
    def unlearned(self) -> list[str]:
        """The user messages since the turn's last lesson (the latest one if none): where the
        turn's request is read, by its lesson and by its searches' learned votes alike."""
        return self.user_texts[self.learned_upto :] or self.user_texts[-1:]

    @property
    def fallback_turn(self) -> int | None:
        """The turn a ``fallback`` is active for, if any (the fallback meta-tool sets it)."""
        return self.marks.fallback_turn

    @fallback_turn.setter
    def fallback_turn(self, turn: int | None) -> None:
        self.marks = replace(self.marks, fallback_turn=turn)

    def snap(self) -> Snap:
        """The session as the pure rules read it (:mod:`~tooltray.memory.core.decision`)."""
        return Snap(self.snapshot, self.marks)

    def loaded_names(self) -> list[str]:
        """Loaded tools in ``tools=`` order."""
        return self.snapshot.names()

    def is_loaded(self, name: str) -> bool:
        """True when ``name`` is in the loaded set (fallback loads included)."""
        return name in self.snapshot.names()


log = logging.getLogger("tooltray")


def warn(state: SessionState, reason: str, exc: Exception, turn: int | None = None) -> None:
    """Log and signal ``loader-degraded``, once per outage (:func:`recovered` ends one): an
    ERROR, or a WARNING for a database busy past its budget (its changes wait, none is lost).
    ``turn``: the turn a decision not applied yet is at (default: the session's)."""
    if reason in state.warned:
        return
    state.warned.add(reason)
    kept = "keeping the last known tools and queueing changes until it is back"
    log.log(
        logging.WARNING if is_transient(exc.__cause__ or exc) else logging.ERROR,
        "tooltray %s failed for session %s: %s; %s.",
        reason,
        state.session_id,
        exc,
        "exposing all tools" if state.health == "degraded" else kept,
    )
    sig.emit(
        sig.loader_degraded,
        state.session_id,
        p.LoaderDegraded(turn=state.turn if turn is None else turn, reason=reason, error=str(exc)),
    )


def recovered(state: SessionState, reason: str) -> None:
    """The fault behind ``reason`` is gone: say so, so that the next outage is loud again."""
    if reason in state.warned:
        state.warned.discard(reason)
        log.info("tooltray %s works again for session %s.", reason, state.session_id)


SIGNALS: dict[str, NamedSignal] = {
    "tools_unloaded": sig.tools_unloaded,
    "tools_loaded": sig.tools_loaded,
    "session_started": sig.session_started,
    "session_ended": sig.session_ended,
    "selection_changed": sig.selection_changed,
    "escape_hatch": sig.escape_hatch,
}
HATCHES: dict[str, Literal["load_tools", "fallback", "unlisted_call"]] = {
    "load_tools": "load_tools",
    "fallback": "fallback",
    "unlisted_call": "unlisted_call",
}
"""An ``escape_hatch`` notice's detail as the signal's kind."""
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
        self._touched: dict[int, SessionState] | None = None
        self._announced: list[Announcement] = []
        self._vectors: dict[str, dict[str, Any]] = {}

    @contextmanager
    def call(self) -> Iterator[None]:
        """One public call: its commits are stored in one transaction at the end, then announced.

        Nested calls (a receiver of a signal the call itself emits) join the outer one.
        """
        if self._touched is not None:
            yield
            return
        self._touched = {}
        try:
            with self.store.reading():
                yield
        finally:
            touched, self._touched = list(self._touched.values()), None
            if self._vectors:
                self._stage_vectors(touched)
            for state in touched:
                self._store(state)
            self._announce()

    @property
    def single_connection(self) -> bool:
        """Whether the store serves every thread on one connection (nothing reads it in the
        background then: ``build_selector``)."""
        return bool(getattr(self.store, "single_connection", False))

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
        """Put the call's vectors (its caller checks there are some) in its first session's
        change set (stored at once without one)."""
        staged, self._vectors = self._vectors, {}
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

    def notify(self, session_id: str, notices: Sequence[Notice]) -> None:
        """Send a decision's notices (signal and payload) once the open call is stored (at once
        outside a call)."""
        for n in notices:
            tools, turn = list(n.tools), n.turn
            payload: BaseModel
            if n.kind == "tools_unloaded":
                payload = p.ToolsUnloaded(turn=n.turn, tools=tools, reason=n.detail)
            elif n.kind == "tools_loaded":
                payload = p.ToolsLoaded(turn=n.turn, tools=tools, source=n.detail)
            elif n.kind == "session_started":
                payload = p.SessionStarted(turn=n.turn, resumed=n.resumed, loaded=tools)
            elif n.kind == "session_ended":
                payload = p.SessionEnded(turn=n.turn)
            elif n.kind == "escape_hatch":
                payload = p.EscapeHatch(turn=turn, kind=HATCHES[n.detail], tools=tools)
            else:
                payload = p.SelectionChanged(turn=turn, added=[], removed=[], prefix_hash=n.detail)
            self._announced.append((SIGNALS[n.kind], session_id, payload))
        if self._touched is None:  # outside a call: at once
            self._announce()

    def _announce(self) -> None:
        while self._announced:
            sig.emit(*self._announced.pop(0))

    def fetch(self, session_id: str) -> SessionSnapshot | None:
        """The stored session; raises StoreError when the database cannot be asked."""
        return self.store.snapshot(session_id)

    def read(self, session_id: str) -> SessionSnapshot | None:
        """The stored session, or ``None`` when it is absent or cannot be read (logged)."""
        try:
            return self.fetch(session_id)
        except StoreError as exc:
            warn(SessionState(session_id, empty_snapshot(session_id)), "store", exc)
            return None

    def commit(self, state: SessionState, changes: Changes) -> None:
        """Apply locally, then store everything not yet stored, in order.

        Inside :meth:`call` the change is only staged: the call stores it with the rest.
        """
        if not changes.empty():
            state.snapshot = apply_local(state.snapshot, changes)
            state.pending.append(changes)
        if self._touched is None:
            self._store(state)
        else:
            self._touched.setdefault(id(state), state)

    def _store(self, state: SessionState) -> None:
        """Store the pending changes in one transaction; they stay queued when it fails."""
        if not state.pending or (state.unread and not self._reread(state)):
            return
        try:
            stored: SessionSnapshot | None = self.store.apply(state.session_id, state.pending)
            state.pending.clear()
        except StoreDataError:
            stored = self._one_by_one(state)
        except StoreError as exc:
            warn(state, "store", exc)
            return
        if state.pending:
            return
        state.snapshot = stored or state.snapshot
        if state.warned:  # an outage to call over
            recovered(state, "store")

    def _one_by_one(self, state: SessionState) -> SessionSnapshot | None:
        """Store the queue change by change: one that can never be stored (a data error, not an
        outage) is dropped with one log line, so it cannot hold up the session's later writes;
        an outage keeps the rest queued."""
        stored = None
        while state.pending:
            try:
                stored = self.store.apply(state.session_id, state.pending[:1])
            except StoreDataError as exc:
                log.error(
                    "tooltray dropped one change to session %s: %s; the database is fine and "
                    "the session's other changes are stored.",
                    state.session_id,
                    exc,
                )
            except StoreError as exc:
                warn(state, "store", exc)
                return None
            state.pending.pop(0)
        return stored

    def unread(self, session_id: str, exc: StoreError) -> SessionState:
        """A session the database cannot be asked about (say, after a restart): all tools for now.

        Taking it for a new session would start and select a stored session a second time once
        the database is back; instead its changes wait in ``pending`` and :meth:`_reread` lays
        them over the stored state as soon as the database answers.
        """
        state = SessionState(session_id, empty_snapshot(session_id), health="degraded", unread=True)
        warn(state, "store", exc)
        return state

    def _reread(self, state: SessionState) -> bool:
        """Read the session the outage hid; False while the database still cannot be asked."""
        try:
            stored = self.store.snapshot(state.session_id)
        except StoreError as exc:
            warn(state, "store", exc)
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
