"""The ToolLoaderTrinket: per-session working memory of loaded tools, changed only at safe moments.

It listens to ``turn-completed``, ``tool-used`` and ``context-compacted``; answers ``prepare`` with
the prompt for a turn; handles the meta-tools; and stores everything it learns in the same
transaction as the state it changes. Selection runs at session start and explicit resume; later
turns only append; idle tools leave only at boundaries (start, resume, compaction).

Faults never end the turn. With the embedder down (or the stored session unreadable) a session
exposes every tool; with the database down it keeps its last known set and queues its changes.
Each outage is logged once and signalled (``loader-degraded``), the first kind also recorded.
The loaded set is kept throughout, so recovery is the next turn going back to it (one prefix
change, never mid-turn) and growing by appending as usual.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any, Literal

from tooltray.events import payloads as p
from tooltray.events import signals as sig
from tooltray.memory.config import Settings
from tooltray.memory.core.planner import Planner
from tooltray.memory.core.prompt import NATIVE_PATHS, PromptView, compose
from tooltray.memory.core.results import ResultShelf
from tooltray.memory.core.selection import Candidate, expired_fallbacks, idle_tools
from tooltray.memory.core.session import (
    MODE_DEGRADED,
    MODE_DISABLED,
    MODE_SELECTED,
    SessionState,
    apply_local,
    empty_snapshot,
    grown_turn,
)
from tooltray.memory.core.signals import SelectionSignals
from tooltray.memory.learning.update import learned_signals, lesson
from tooltray.memory.metatools import effects as loading
from tooltray.memory.metatools.specs import (
    FALLBACK,
    LOAD_TOOLS,
    META_TOOL_NAMES,
    READ_RESULT,
    UNLOAD_TOOLS,
    meta_tool_specs,
    parse_load,
    parse_read_result,
    parse_unload,
)
from tooltray.memory.store import Store
from tooltray.memory.store.records import (
    Changes,
    HistoryEvent,
    Learning,
    Load,
    SessionSnapshot,
    TurnRecord,
    Unload,
    Use,
)
from tooltray.tools.errors import ConfigError, MetaToolArgumentError, StoreError, TooltrayError
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec

log = logging.getLogger("tooltray")


def user_texts(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The user messages' text, oldest first (list-of-parts contents are joined)."""
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
    return out


def _apply_policy(registry: ToolRegistry, settings: Settings) -> ToolRegistry:
    """Narrow the registry by the settings' allow and deny lists (deny adds; allow sets).

    Raises:
        ConfigError: both the registry and the settings carry a different allow-list.
    """
    if settings.deny:
        registry.deny = set(registry.deny) | set(settings.deny)
    if settings.allow is not None:
        if registry.allow is not None and set(registry.allow) != set(settings.allow):
            raise ConfigError(
                "Both the registry and the settings have an allow-list: keep one of them "
                "(ToolRegistry(allow=...) or Settings(allow=...) / TOOLTRAY_ALLOW)."
            )
        registry.allow = settings.allow
    return registry


class ToolLoaderTrinket:
    """Working memory for an agent's tools, one state per session, durable in a store.

    Args:
        registry: every tool the agent has; its allow-list filters everything here.
        store: the database; ``None`` opens ``settings.db`` (unless the loader is off). One
            that cannot be used (corrupt, foreign, newer) is left alone and every session runs
            degraded, with the reason in :attr:`store_error`.
        settings: tunables; defaults from the environment and ``tooltray.toml``.
        planner: decides picks; ``None`` builds one from the registry and the embedder.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        store: Store | None = None,
        *,
        settings: Settings | None = None,
        planner: Planner | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.registry = _apply_policy(registry, self.settings)
        self.enabled = self.settings.enabled and self.settings.memory_enabled
        self.store_error: StoreError | None = None
        self.store = store if store is not None or not self.enabled else self._open_store()
        self.planner = planner or Planner(registry, self.settings, self.store)
        self.signals: SelectionSignals = learned_signals(
            self.store, self.registry.is_allowed, self.settings
        )
        self.shelf = ResultShelf(self.store, self.settings.result_max_chars)
        self._sessions: dict[str, SessionState] = {}
        self._lock = threading.RLock()
        sig.turn_completed.connect(self._on_turn_completed)
        sig.tool_used.connect(self._on_tool_used)
        sig.context_compacted.connect(self._on_compacted)

    def _open_store(self) -> Store | None:
        """Open ``settings.db``; a database tooltray cannot use degrades instead of raising.

        A corrupt, foreign or newer database must not stop the agent's turn: every session then
        exposes all tools and logs why, and the refusal is kept in :attr:`store_error`.
        """
        try:
            return Store(self.settings.db)
        except StoreError as exc:
            self.store_error = exc
            return None

    def close(self) -> None:
        """Store what is deferred and stop listening to signals (the stored state stays)."""
        self.flush()
        sig.turn_completed.disconnect(self._on_turn_completed)
        sig.tool_used.disconnect(self._on_tool_used)
        sig.context_compacted.disconnect(self._on_compacted)

    # ----- lifecycle -------------------------------------------------------------------------

    def start(self, session_id: str, messages: Sequence[dict[str, Any]] = ()) -> PromptView:
        """Session boundary: start a new session or explicitly resume a stored one.

        A resume evicts tools idle for ``idle_turns`` (counted up to the turn ``messages``
        imply) and selects again, appending fresh picks. A process that merely restarts should
        call :meth:`prepare` instead, which rehydrates the session without a boundary.
        """
        with self._lock:
            self.flush(session_id)
            self._sessions.pop(session_id, None)
            existed = self.store is not None and self._read(session_id) is not None
            state = self._state(session_id)
            if existed and state.mode != MODE_DISABLED:
                turn = len(user_texts(messages))
                if turn > state.turn:
                    self._commit(state, Changes(turn=turn))
                self._boundary(state)
            return self._prepare(state, list(messages))

    def prepare(self, session_id: str, messages: Sequence[dict[str, Any]]) -> PromptView:
        """The prompt for this turn: call before every model request (also mid-turn)."""
        with self._lock:
            return self._prepare(self._state(session_id), list(messages))

    def end(self, session_id: str) -> None:
        """Mark the session ended; its state stays in the store for a later resume."""
        with self._lock:
            state = self._state(session_id)
            self._commit(state, Changes(status="ended", events=[self._event(state, "ended")]))
            sig.emit(sig.session_ended, session_id, p.SessionEnded(turn=state.turn))
            self._sessions.pop(session_id, None)

    def compact(self, session_id: str, turn: int | None = None) -> list[str]:
        """Tell tooltray the context was compacted: a boundary where idle tools are evicted."""
        before = set(self.loaded(session_id))
        sig.emit(sig.context_compacted, session_id, p.ContextCompacted(turn=turn))
        return sorted(before - set(self.loaded(session_id)))

    def loaded(self, session_id: str) -> list[str]:
        """The session's loaded tools in ``tools=`` order."""
        with self._lock:
            return self._state(session_id).loaded_names()

    def state(self, session_id: str) -> SessionState:
        """The live state of a session (loads it from the store if needed)."""
        with self._lock:
            return self._state(session_id)

    # ----- tool calls ------------------------------------------------------------------------

    def meta_tools(self) -> list[ToolSpec]:
        """The meta-tools' specs (they lead ``tools=`` in selected mode)."""
        return meta_tool_specs()

    def is_meta(self, name: str) -> bool:
        """True for load_tools, unload_tools, fallback and read_result."""
        return name in META_TOOL_NAMES

    def handle_meta(self, session_id: str, name: str, arguments: Any) -> str:
        """Run a meta-tool call and return the short text for the model; never raises."""
        with self._lock:
            state = self._state(session_id)
            try:
                return self._meta(state, name, arguments)
            except MetaToolArgumentError as exc:
                self._commit(state, Changes(events=[self._event(state, "refused", name, str(exc))]))
                return f"Error: {exc}"

    def _meta(self, state: SessionState, name: str, arguments: Any) -> str:
        if name == LOAD_TOOLS:
            out = loading.load_tools(
                self.registry,
                state,
                parse_load(arguments),
                self._search(state),
                self.settings.hard_max_tools,
            )
            return self._apply_outcome(state, out, "load_tools")
        if name == UNLOAD_TOOLS:
            out = loading.unload_tools(self.registry, state, parse_unload(arguments))
            return self._apply_outcome(state, out, None)
        if name == FALLBACK:
            state.fallback_turn = state.turn
            return self._apply_outcome(state, loading.fallback(self.registry, state), "fallback")
        if name == READ_RESULT:
            handle, offset = parse_read_result(arguments)
            return self.shelf.read(handle, offset)
        raise MetaToolArgumentError(f"{name!r} is not a meta-tool: use one of {META_TOOL_NAMES}.")

    def _apply_outcome(self, state: SessionState, out: loading.Outcome, escape: str | None) -> str:
        if escape and out.added:
            out.changes.events.append(self._event(state, "escape", None, escape))
        self._commit(state, out.changes)
        if out.added:
            source = "fallback" if escape == "fallback" else "escape"
            sig.emit(
                sig.tools_loaded,
                state.session_id,
                p.ToolsLoaded(turn=state.turn, tools=out.added, source=source),
            )
            kind: Literal["fallback", "load_tools"] = (
                "fallback" if escape == "fallback" else "load_tools"
            )
            sig.emit(
                sig.escape_hatch,
                state.session_id,
                p.EscapeHatch(turn=state.turn, kind=kind, tools=out.added),
            )
        if out.removed:
            sig.emit(
                sig.tools_unloaded,
                state.session_id,
                p.ToolsUnloaded(turn=state.turn, tools=out.removed, reason="unloaded"),
            )
        return out.text

    def refuse(self, session_id: str, tool: str, reason: str) -> None:
        """Record that a call to ``tool`` was refused (not allowed, unknown, bad arguments)."""
        with self._lock:
            state = self._state(session_id)
            event = self._event(state, "refused", tool[:64], reason[:500])
            self._commit(state, Changes(events=[event]))

    def shorten(self, session_id: str, tool: str, result: str) -> str:
        """A long result shortened with a handle (full text stored); short ones unchanged."""
        with self._lock:
            state = self._state(session_id)
            return self.shelf.shorten(session_id, state.turn, tool, result)

    # ----- signal receivers ------------------------------------------------------------------

    def _on_tool_used(self, sender: Any, payload: p.ToolUsed, **_: Any) -> None:
        with self._lock:
            state = self._sessions.get(str(sender))
            if state is None or not self.enabled or payload.tool in META_TOOL_NAMES:
                return
            turn = payload.turn or state.turn
            if not self.registry.is_allowed(payload.tool):
                why = "reported as used, but unknown or not in the allow-list"
                self._defer(
                    state, Changes(events=[self._event(state, "refused", payload.tool[:64], why)])
                )
                return
            changes = Changes(uses=[Use(payload.tool, turn)])
            if self.settings.learn == "on":
                state.taught.append(payload.tool)
            if not state.is_loaded(payload.tool):
                changes.loads.append(Load(payload.tool, "escape", turn))
                changes.events.append(self._event(state, "escape", payload.tool, "unlisted_call"))
            self._defer(state, changes)
            if changes.loads:
                sig.emit(
                    sig.escape_hatch,
                    state.session_id,
                    p.EscapeHatch(turn=turn, kind="unlisted_call", tools=[payload.tool]),
                )

    def _on_turn_completed(self, sender: Any, payload: p.TurnCompleted, **_: Any) -> None:
        with self._lock:
            state = self._sessions.get(str(sender))
            if state is None or not self.enabled:
                return
            turn = max(payload.turn, state.turn)
            changes = self._expire_fallback(state, turn)
            changes.turn = turn
            changes.learn = self._lesson(state, turn)
            self._commit(state, changes)

    def _lesson(self, state: SessionState, turn: int) -> Learning | None:
        """What the finished turn teaches (allowed tools it used, its message's vector)."""
        tools, state.taught = state.taught, []
        return lesson(self.settings, turn, tools, state.user_text, self.planner.message_vector)

    def _expire_fallback(self, state: SessionState, turn: int) -> Changes:
        keep, drop = expired_fallbacks(state.snapshot.loaded, state.fallback_turn or turn)
        state.fallback_turn = None
        changes = Changes(
            loads=[Load(n, "escape", turn) for n in keep], unloads=[Unload(n) for n in drop]
        )
        if drop:
            sig.emit(
                sig.tools_unloaded,
                state.session_id,
                p.ToolsUnloaded(turn=turn, tools=drop, reason="fallback-expired"),
            )
        return changes

    def _on_compacted(self, sender: Any, payload: p.ContextCompacted, **_: Any) -> None:
        with self._lock:
            state = self._sessions.get(str(sender))
            if state is None or not self.enabled:
                return
            turn = max(payload.turn or 0, state.turn)
            changes = self._evict(state, turn)
            changes.events.append(self._event(state, "compacted"))
            self._commit(state, changes)

    def _evict(self, state: SessionState, turn: int) -> Changes:
        gone = idle_tools(state.snapshot.loaded, turn, self.settings.idle_turns)
        if gone:
            sig.emit(
                sig.tools_unloaded,
                state.session_id,
                p.ToolsUnloaded(turn=turn, tools=gone, reason="evicted"),
            )
        return Changes(unloads=[Unload(n, "evicted") for n in gone])

    # ----- internals -------------------------------------------------------------------------

    def _event(
        self, state: SessionState, kind: str, tool: str | None = None, detail: str | None = None
    ) -> HistoryEvent:
        return HistoryEvent(state.session_id, state.turn, kind, tool=tool, detail=detail)

    def _state(self, session_id: str) -> SessionState:
        """The live state: from memory, else rehydrated from the store, else a new session."""
        state = self._sessions.get(session_id)
        if state is not None:
            return state
        try:
            snapshot = self._fetch(session_id)
        except StoreError as exc:
            return self._unread(session_id, exc)
        state = SessionState(session_id, snapshot or empty_snapshot(session_id))
        state.grown_turn = grown_turn(state.snapshot)
        self._sessions[session_id] = state
        if not self.enabled:
            state.mode = MODE_DISABLED
        elif self.store_error is not None:
            self._degrade(state, "store", self.store_error)
        elif snapshot is None:
            self._boundary(state, fresh=True)
        return state

    def _fetch(self, session_id: str) -> SessionSnapshot | None:
        """The stored session; raises StoreError when the database cannot be asked."""
        if self.store is None or not self.enabled:
            return None
        return self.store.snapshot(session_id)

    def _read(self, session_id: str) -> SessionSnapshot | None:
        try:
            return self._fetch(session_id)
        except StoreError as exc:
            self._warn(SessionState(session_id, empty_snapshot(session_id)), "store", exc)
            return None

    def _boundary(self, state: SessionState, fresh: bool = False) -> None:
        """Start or resume ``state``; a ``fresh`` start is stored only if no process beat us."""
        resumed = bool(state.snapshot.loaded) or state.turn > 0
        changes = self._evict(state, state.turn) if resumed else Changes()
        changes.events.append(self._event(state, "resumed" if resumed else "started"))
        changes.meta = {"selected": False}
        changes.status = "active"
        changes.only_new = fresh
        self._commit(state, changes)
        sig.emit(
            sig.session_started,
            state.session_id,
            p.SessionStarted(turn=state.turn, resumed=resumed, loaded=state.loaded_names()),
        )

    def _prepare(self, state: SessionState, messages: list[dict[str, Any]]) -> PromptView:
        if state.mode == MODE_DISABLED:
            return self._all_view(state, MODE_DISABLED)
        users = user_texts(messages)
        if self.settings.learn == "on" and users:
            state.user_text = users[-1]
        changes = Changes()
        turn = len(users)
        if turn > state.turn:
            if state.fallback_turn is not None and state.fallback_turn < turn:
                changes = self._expire_fallback(state, turn)
            changes.turn = turn
            self._commit(state, changes)
        try:
            self._select(state, users)
        except TooltrayError as exc:
            self._degrade(state, "selection", exc)
        view = self._view(state)
        self._record_turn(state, view)
        return view

    def _may_recover(self, state: SessionState) -> bool:
        """Whether a degraded session tries selection again now: at most once a turn, at its start.

        Selection changes only between turns, so the tools never shrink under the model in the
        middle of one. The loaded set was kept through the outage (plus what the model loaded or
        called), so recovering costs one prefix change back to it and growth appends as usual.
        A session whose stored state is still unread, or a trinket whose database could not be
        opened (``store`` is ``None``), stays degraded.
        """
        if state.unread or self.store is None or state.grown_turn == state.turn:
            state.grown_turn = state.turn
            return False
        state.mode = MODE_SELECTED
        return True

    def _select(self, state: SessionState, users: list[str]) -> None:
        if state.mode == MODE_DEGRADED and not self._may_recover(state):
            return
        first = not state.snapshot.meta.get("selected")
        if not first and self.settings.growth == "never":
            return
        if not first and (not users or state.grown_turn == state.turn):
            return
        state.grown_turn = state.turn
        plan = self.planner.plan(state, users, initial=first)
        self._recovered(state, "selection")
        changes = Changes(loads=[Load(c.name, c.source, state.turn, c.score) for c in plan.loads])
        changes.meta = {"grown": state.turn}  # a restart mid-turn must not grow the turn again
        changes.unless = {"selected": True} if first else {"grown": state.turn}
        if first and users:
            changes.meta = {"selected": True, "mode": plan.mode, "grown": state.turn}
            changes.events.append(self._event(state, "selected", None, plan.mode))
        self._commit(state, changes)
        if plan.loads:
            names = [c.name for c in plan.loads]
            sig.emit(
                sig.tools_loaded,
                state.session_id,
                p.ToolsLoaded(turn=state.turn, tools=names, source=plan.loads[0].source),
            )

    def _view(self, state: SessionState) -> PromptView:
        if state.mode == MODE_DEGRADED:
            return self._all_view(state, MODE_DEGRADED)
        specs = [s for s in (self.registry.get(n) for n in state.loaded_names()) if s is not None]
        specs = [s for s in specs if self.registry.is_allowed(s.name)]
        native = self.settings.path in NATIVE_PATHS
        if state.snapshot.meta.get("mode") != "all" and native:
            specs = meta_tool_specs() + specs
        menu = self.planner.menu() if state.snapshot.meta.get("mode") != "all" else ""
        return compose(
            session_id=state.session_id,
            turn=state.turn,
            path=self.settings.path,
            mode=str(state.snapshot.meta.get("mode", MODE_SELECTED)),
            instructions=self.settings.instructions,
            specs=specs,
            menu=menu,
            eager_tokens=self.planner.eager_tokens(),
        )

    def _all_view(self, state: SessionState, mode: str) -> PromptView:
        return compose(
            session_id=state.session_id,
            turn=state.turn,
            path=self.settings.path,
            mode=mode,
            instructions=self.settings.instructions,
            specs=self.registry.allowed(),
            menu="",
            eager_tokens=self.planner.eager_tokens(),
        )

    def _record_turn(self, state: SessionState, view: PromptView) -> None:
        """One ``turns`` row per turn with the prefix hash handed out (upserted on a change)."""
        same = view.prefix_hash == state.prefix_hash
        if state.mode == MODE_DISABLED or (same and state.recorded_turn == state.turn):
            return
        previous = None if same else state.prefix_hash
        state.prefix_hash, state.recorded_turn = view.prefix_hash, state.turn
        record = TurnRecord(
            state.session_id,
            state.turn,
            view.prefix_hash,
            view.tool_tokens,
            len(view.loaded),
            view.eager_tokens,
        )
        self._commit(state, Changes(turn_record=record))
        if previous is not None:
            sig.emit(
                sig.selection_changed,
                state.session_id,
                p.SelectionChanged(
                    turn=state.turn, added=[], removed=[], prefix_hash=view.prefix_hash
                ),
            )

    def _commit(self, state: SessionState, changes: Changes) -> None:
        """Apply locally, then store everything not yet stored (deferred uses first), in order."""
        if state.deferred is not None:
            state.pending.append(state.deferred)
            state.deferred = None
        if not changes.empty():
            state.snapshot = apply_local(state.snapshot, changes)
            if self.store is not None:
                state.pending.append(changes)
        if self.store is None or not state.pending:
            return
        if state.unread and not self._reread(state, self.store):
            return
        try:
            while state.pending:
                stored = self.store.apply(state.session_id, state.pending[0])
                state.pending.pop(0)
            state.snapshot = stored
        except StoreError as exc:
            self._warn(state, "store", exc)
            return
        self._recovered(state, "store")

    def _unread(self, session_id: str, exc: StoreError) -> SessionState:
        """A session the database cannot be asked about (say, after a restart): all tools for now.

        Taking it for a new session would start and select a stored session a second time once
        the database is back; instead its changes wait in ``pending`` and :meth:`_reread` lays
        them over the stored state as soon as the database answers.
        """
        state = SessionState(session_id, empty_snapshot(session_id), MODE_DEGRADED, unread=True)
        self._sessions[session_id] = state
        self._warn(state, "store", exc)
        return state

    def _reread(self, state: SessionState, store: Store) -> bool:
        """Read the session the outage hid; False while the database still cannot be asked."""
        try:
            stored = store.snapshot(state.session_id)
        except StoreError as exc:
            self._warn(state, "store", exc)
            return False
        state.unread = False
        if stored is None:
            self._start_late(state)
            return True
        for changes in state.pending:
            stored = apply_local(stored, changes)
        state.snapshot = stored
        return True

    def _start_late(self, state: SessionState) -> None:
        """The unread session was new after all: start it, then store what was queued."""
        queued, state.pending = state.pending, []
        state.snapshot = empty_snapshot(state.session_id)
        self._boundary(state, fresh=True)
        for changes in queued:
            state.snapshot = apply_local(state.snapshot, changes)
        state.pending += queued

    def _defer(self, state: SessionState, changes: Changes) -> None:
        """Apply tool-used changes now and store them with the next commit (turn end at latest).

        A crash loses at most the turn in flight, and a burst of tool calls costs one
        transaction instead of one each.
        """
        state.snapshot = apply_local(state.snapshot, changes)
        if self.store is None:
            return
        merged = state.deferred or Changes()
        merged.loads += changes.loads
        merged.uses += changes.uses
        merged.events += changes.events
        merged.turn = max(merged.turn or 0, changes.turn or 0) or None
        state.deferred = merged

    def flush(self, session_id: str | None = None) -> None:
        """Store deferred tool-used records now (one session, or every live one)."""
        with self._lock:
            ids = [session_id] if session_id else list(self._sessions)
            for sid in ids:
                if sid in self._sessions:
                    self._commit(self._sessions[sid], Changes())

    def _search(self, state: SessionState) -> loading.Search:
        """The planner's search for ``load_tools``; lexical while the embedder is down."""

        def search(query: str) -> list[Candidate]:
            try:
                return self.planner.search(query)
            except TooltrayError as exc:
                self._degrade(state, "selection", exc)
                return self.planner.search_lexically(query)

        return search

    def _degrade(self, state: SessionState, reason: str, exc: Exception) -> None:
        """Expose every tool; the outage is logged and recorded once, not on every retry."""
        if state.mode == MODE_DISABLED:
            return
        state.mode = MODE_DEGRADED
        if reason in state.warned:
            return
        self._warn(state, reason, exc)
        detail = f"{reason}: {exc}"[:500]
        self._commit(state, Changes(events=[self._event(state, "degraded", None, detail)]))

    def _warn(self, state: SessionState, reason: str, exc: Exception) -> None:
        """Log loudly and signal once per outage (:meth:`_recovered` ends one)."""
        if reason in state.warned:
            return
        state.warned.add(reason)
        kept = "keeping the last known tools and queueing changes until it is back"
        log.error(
            "tooltray %s failed for session %s: %s; %s.",
            reason,
            state.session_id,
            exc,
            "exposing all tools" if state.mode == MODE_DEGRADED else kept,
        )
        sig.emit(
            sig.loader_degraded,
            state.session_id,
            p.LoaderDegraded(turn=state.turn, reason=reason, error=str(exc)),
        )

    def _recovered(self, state: SessionState, reason: str) -> None:
        """The fault behind ``reason`` is gone: say so, so that the next outage is loud again."""
        if reason in state.warned:
            state.warned.discard(reason)
            log.warning("tooltray %s works again for session %s.", reason, state.session_id)
