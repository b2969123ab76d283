"""The trinket: the public API (``prepare``, ``handle_meta``, the signals it listens to) over
one working memory of tools per session, changed only at safe moments.

It listens to ``turn-completed``, ``tool-used`` and ``context-compacted`` of its own sessions
(blinker's sender filter), answers ``prepare`` with the prompt for a turn and handles the
meta-tools. A ``prepare`` reads the session, asks the catalog for the turn's scores once, takes
one pure :class:`~tooltray.memory.core.decision.Decision` (``on_prepare``, its view's record
included), stores its changes in the call's one transaction and sends its notices after it.
Selection runs at session start and resume; later turns only append; idle tools leave only at
boundaries (start, resume, compaction), so the prompt prefix stays byte-stable between them.

Faults never end the turn: with the embedder down (or the stored session unreadable) a session
exposes every tool; with the database down it keeps its last known set and queues its changes;
recovery is the next turn going back to the kept set.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from itertools import filterfalse
from operator import attrgetter
from typing import Any, Literal

from blinker import NamedSignal

from tooltray.events import payloads as p
from tooltray.events import signals as sig
from tooltray.memory.config import Settings
from tooltray.memory.core import decision as decide
from tooltray.memory.core import inputs
from tooltray.memory.core.catalog import AllowedCatalog, Prepared
from tooltray.memory.core.decision import (
    Conversation,
    Decision,
    Fault,
    Marks,
    Owed,
    Plan,
    Scores,
    Snap,
    stored_reveals,
)
from tooltray.memory.core.fork import fork_session, not_refused
from tooltray.memory.core.meter import PromptMeter
from tooltray.memory.core.prompt import (
    NATIVE_PATHS,
    PromptView,
    adds,
    compose,
    defers,
    note,
    prefix_digest,
)
from tooltray.memory.core.results import ResultShelf
from tooltray.memory.core.session import (
    MODE_SELECTED,
    Journal,
    SessionState,
    ViewMode,
    grown_turn,
    learned_upto,
    recovered,
    user_turn,
    warn,
)
from tooltray.memory.learning.lessons import learned_signals, led_to, lesson
from tooltray.memory.learning.usage import check_implicit
from tooltray.memory.metatools.meta_tools import (
    CALL_TOOL,
    HANDLERS,
    LISTED,
    LOADED,
    META_TOOL_NAMES,
    MetaCall,
    meta_tool_specs,
    not_meta,
    parse_bridge,
    shown_meta_specs,
)
from tooltray.memory.retrieval.scoring import Candidate
from tooltray.memory.retrieval.selector import SelectionSignals
from tooltray.memory.store import MemoryStore, Store
from tooltray.memory.store.base import BaseStore
from tooltray.memory.store.records import (
    Changes,
    EventKind,
    HistoryEvent,
    Learning,
    PinnedMenu,
    SessionMeta,
    SessionSnapshot,
    empty_snapshot,
)
from tooltray.tools.errors import MetaToolArgumentError, StoreError, TooltrayError
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import canonical_json
from tooltray.tools.spec import ToolSpec


def all_tools_view(
    session_id: str,
    turn: int,
    mode: ViewMode,
    settings: Settings,
    allowed: Sequence[ToolSpec],
    eager_tokens: int,
) -> PromptView:
    """Every allowed tool and no menu: the legacy path a loader problem degrades to."""
    return compose(
        session_id=session_id,
        turn=turn,
        path=settings.path,
        mode=mode,
        instructions=settings.instructions,
        specs=allowed,
        menu="",
        eager_tokens=eager_tokens,
        code_callers=settings.code_callers,
    )


PrefixKey = tuple[Any, ...]
"""A prefix view's key in the prepared catalog: names, mode, deferring and the settings shown."""


def selected_view(
    snapshot: SessionSnapshot, settings: Settings, registry: ToolRegistry, catalog: AllowedCatalog
) -> PromptView:
    """The session's prefix tools in ``tools=`` order, led by the meta-tools on native paths,
    and (``reveal = "append"``) the tools revealed since the last boundary, after it: natively
    deferred where the provider defers tools, else through notes and the ``call_tool`` bridge."""
    meta, names = snapshot.meta, snapshot.names()
    stored = meta.get("prefix") if settings.reveal == "append" else None
    # without a stored prefix every loaded tool is in it; a prefix tool unloaded mid-session
    # stays until the next boundary, and the loaded tools outside the prefix are revealed
    prefix_names = names if stored is None else list(stored)
    inside = set(prefix_names)
    revealed_names = [n for n in names if n not in inside] if stored is not None else []
    cat = catalog.prepared()
    native = settings.path in NATIVE_PATHS
    deferring = defers(settings.path, settings.reveal, meta)
    mode, s, menu = meta.get("mode", MODE_SELECTED), settings, catalog.menu_for(meta)[0]
    shown = (s.path, s.reveal, s.instructions, s.code_callers, menu)
    key = (tuple(prefix_names), mode, deferring, *shown)
    view = cat.prefixes.get(key) or _prefix(settings, catalog, prefix_names, key)
    revealed = cat.pick(revealed_names)
    loaded = view.loaded + tuple(map(attrgetter("name"), revealed))
    sid, turn = snapshot.session_id, snapshot.turn
    view = replace(view, session_id=sid, turn=turn, revealed=tuple(revealed), loaded=loaded)
    reveals = _by_turn(stored_reveals(meta.get("reveals")) if stored is not None else [])
    if deferring:
        addition = adds(settings.path, settings.reveal, settings.tool_addition, meta)
        return replace(_deferring(view, registry, cat, reveals), addition=addition)
    return replace(view, notes=_notes(reveals, catalog, native))


def _prefix(
    settings: Settings, catalog: AllowedCatalog, names: list[str], key: PrefixKey
) -> PromptView:
    """The view of a prefix (meta-tools, ``names``, the menu) for its ``key`` (names, mode,
    deferring, settings, the session's menu last), rendered once per catalog: it is byte-stable
    between boundaries, so a later turn that only reveals re-uses it whole (its caller looks it
    up first)."""
    cat, mode, deferring = catalog.prepared(), key[1], key[2]
    choosing = mode != "all"
    if key not in cat.prefixes:
        specs = catalog.shown(cat.pick(names))
        if choosing and settings.path in NATIVE_PATHS:
            specs = [*shown_meta_specs(settings.reveal, deferring), *specs]
        view = compose(
            session_id="",
            turn=0,
            path=settings.path,
            mode=mode,
            instructions=settings.instructions,
            specs=specs,
            menu=key[-1] if choosing else "",
            eager_tokens=cat.eager_tokens,
            code_callers=settings.code_callers,
        )
        cat.keep_prefix(key, view)
    return cat.prefixes[key]


def _deferring(
    view: PromptView, registry: ToolRegistry, cat: Prepared, reveals: dict[int, list[str]]
) -> PromptView:
    """``view`` for a provider that defers tools: every allowed tool outside its full part is
    declared deferred in catalog order, so ``tools=`` changes only at boundaries, and each
    turn's reveals are kept as tools for the provider's own search answer."""
    shown = {s.name for s in view.specs}
    view = replace(
        view,
        deferring=True,
        deferred=tuple(s for s in registry.allowed() if s.name not in shown),
        bundles=tuple(registry.bundles()),
        reveals=tuple((t, tuple(cat.pick(n))) for t, n in reveals.items()),
    )
    return replace(
        view, prefix_hash=prefix_digest(view.system_prefix, canonical_json(view.tools()))
    )


def _by_turn(reveals: Sequence[tuple[int, list[str]]]) -> dict[int, list[str]]:
    """The stored reveals' names per user turn, each once (a turn's reveals share one note)."""
    by_turn: dict[int, list[str]] = {}
    for turn, names in reveals:
        by_turn[turn] = list(dict.fromkeys(by_turn.get(turn, []) + names))
    return by_turn


def _notes(
    reveals: dict[int, list[str]], catalog: AllowedCatalog, native: bool
) -> tuple[tuple[int, str], ...]:
    """Each turn's reveal note, keyed by its user turn."""
    out = []
    for turn, names in reveals.items():
        text = note(catalog.shown(catalog.prepared().pick(names)), native)
        if text:
            out.append((turn, text))
    return tuple(out)


log = logging.getLogger("tooltray")
STEP_DOWN: dict[str, tuple[str, str, SessionMeta]] = {
    "exchange": ("tool_addition", "a load_tools exchange", {"addition_refused": True}),
    "bridge": ("deferred tools", "call_tool", {"bridged": True}),
}
"""What a refused reveal mode steps down to: what was refused, what is used now, the meta flag."""

Receiver = Callable[..., None]


class ToolLoaderTrinket:
    """Working memory for an agent's tools, one state per session, durable in a store.

    Use it as a context manager (``with ToolLoaderTrinket(...) as trinket:``) or call
    :meth:`close`, so that its signal receivers are disconnected and deferred records stored.

    Args:
        registry: every tool the agent has; its allow-list filters everything here. The
            settings' allow and deny lists narrow a view of it; the caller's object is unchanged.
        store: the database; ``None`` opens ``settings.db`` (or, with the loader off, keeps
            state in this process). One that cannot be used (corrupt, foreign, newer) is left
            alone and every session runs degraded, with the reason in :attr:`store_error`.
        settings: tunables; defaults from the environment and ``tooltray.toml``.
        catalog: the allowed catalog prepared for selection (it scores turns and decides picks);
            ``None`` builds one from the registry and the embedder.
        shows_menu: whether the model reads the prompt's system text, bundle menu included (a
            gateway's MCP client does not): a directory of bundles then leaves the menu's out.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        store: BaseStore | None = None,
        *,
        settings: Settings | None = None,
        catalog: AllowedCatalog | None = None,
        shows_menu: bool = True,
    ) -> None:
        self.settings = settings or Settings()
        self.shows_menu = shows_menu
        self.registry = registry.narrowed(self.settings.allow, self.settings.deny or ())
        self.enabled = self.settings.enabled
        self.store_error: StoreError | None = None
        self._owns_store = store is None  # a store passed in is its caller's to close
        self.store: BaseStore = store if store is not None else self._open_store()
        self.journal = Journal(self.store, lambda state: self._start(state, fresh=True))
        self.signals: SelectionSignals = learned_signals(
            self.store, self.registry.is_allowed, self.settings
        )
        self.catalog = catalog or AllowedCatalog(
            self.registry, self.settings, self.journal, self.signals
        )
        if self.settings.implicit and len(self.registry):  # a gateway's servers list later
            check_implicit(self.settings.implicit, self.registry.allowed())
        self.shelf = ResultShelf(self.store, self.settings.result_max_chars)
        self._sessions: dict[str, SessionState] = {}
        self._meters: defaultdict[str, PromptMeter] = defaultdict(PromptMeter)
        self._lock = threading.RLock()
        self._receivers: tuple[tuple[NamedSignal, Receiver], ...] = (
            (sig.turn_completed, self._on_turn_completed),
            (sig.tool_used, self._on_tool_used),
            (sig.context_compacted, self._on_compacted),
        )
        sig.tools_registered.connect(self._on_tools_registered, sender=self.registry)

    def _open_store(self) -> BaseStore:
        """Open ``settings.db``; a database tooltray cannot use degrades instead of raising.

        A corrupt, foreign or newer database must not stop the agent's turn: every session then
        exposes all tools and logs why, and the refusal is kept in :attr:`store_error`. With the
        loader off, nothing is opened: state stays in this process.
        """
        if not self.enabled:
            return MemoryStore()
        try:
            return Store(self.settings.db, wait=self.settings.store_wait)
        except StoreError as exc:
            self.store_error = exc
            return MemoryStore()

    def close(self) -> None:
        """Store what is deferred, stop listening to signals and release the connections of a
        store this trinket opened (the stored state stays)."""
        self.flush()
        with self._lock:
            for session_id in list(self._sessions):
                self._forget(session_id)
        sig.tools_registered.disconnect(self._on_tools_registered, sender=self.registry)
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> ToolLoaderTrinket:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ----- lifecycle -------------------------------------------------------------------------

    def start(self, session_id: str, messages: Sequence[dict[str, Any]] = ()) -> PromptView:
        """Session boundary: start a new session or explicitly resume a stored one.

        A resume evicts tools idle for ``idle_turns`` (counted up to the turn ``messages``
        imply) and selects again, appending fresh picks. A process that merely restarts should
        call :meth:`prepare` instead, which rehydrates the session without a boundary.
        """
        session_id, messages = inputs.session_id(session_id), inputs.messages(messages)
        with self._lock:
            self.flush(session_id)
            self._forget(session_id)
            existed = self._usable() and self.journal.read(session_id) is not None
            with self.journal.call():
                state = self._state(session_id)
                if existed and state.health != "disabled":
                    idle = self.settings.idle_turns
                    turn, menu = user_turn(messages), self._pin()
                    self._apply(state, decide.resume(state.snap(), turn, idle, menu))
                return self._prepare(state, list(messages))

    def prepare(self, session_id: str, messages: Sequence[dict[str, Any]]) -> PromptView:
        """The prompt for this turn: call before every model request (also mid-turn)."""
        session_id, messages = inputs.session_id(session_id), inputs.messages(messages)
        with self._lock, self.journal.call():
            return self._prepare(self._state(session_id), list(messages))

    def end(self, session_id: str) -> None:
        """Mark the session ended; its state stays in the store for a later resume."""
        session_id = inputs.session_id(session_id)
        with self._lock:
            with self.journal.call():
                state = self._state(session_id)
                self._apply(state, decide.ended(state.snap()))
            self._forget(session_id)

    def release(self, session_id: str) -> None:
        """Store what is deferred and drop the session's live state (its client went away);
        the stored state stays, so a later call resumes it as after a restart."""
        with self._lock:
            self.flush(session_id)
            self._forget(session_id)
            self.shelf.forget(session_id)

    def fork(self, parent_id: str, child_id: str) -> list[str]:
        """Start the new session ``child_id`` from ``parent_id``'s loaded and revealed tools
        (a subagent, a forked conversation); the child's later changes never touch the parent's.
        Returns the child's loaded set (:func:`~tooltray.memory.core.fork.fork_session`).

        Raises:
            SessionForkError: no such parent, or ``child_id`` exists already.
            InputError: either id is not a usable session id.
        """
        parent_id, child_id = inputs.session_id(parent_id), inputs.session_id(child_id)
        with self._lock:
            self.flush(parent_id)
            names = fork_session(self.store, parent_id, child_id, not_refused(self.registry))
            self._forget(child_id)
        started = p.SessionStarted(turn=0, resumed=False, loaded=names)
        sig.emit(sig.session_started, child_id, started)
        return names

    def compact(self, session_id: str, turn: int | None = None) -> list[str]:
        """Tell tooltray the context was compacted: a boundary where idle tools are evicted."""
        session_id = inputs.session_id(session_id)
        before = set(self.loaded(session_id))
        sig.emit(sig.context_compacted, session_id, p.ContextCompacted(turn=turn))
        return sorted(before - set(self.loaded(session_id)))

    def loaded(self, session_id: str) -> list[str]:
        """The session's loaded tools in ``tools=`` order."""
        session_id = inputs.session_id(session_id)
        with self._lock:
            return self._state(session_id).loaded_names()

    def state(self, session_id: str) -> SessionState:
        """The live state of a session (loads it from the store if needed)."""
        session_id = inputs.session_id(session_id)
        with self._lock:
            return self._state(session_id)

    def meter(self, session_id: str) -> PromptMeter:
        """This turn's prompt tokens so far for a live session, re-used and new."""
        with self._lock:
            return self._meters[session_id]

    def all_tools_view(
        self, session_id: str, turn: int, mode: ViewMode = "degraded", eager_tokens: int = 0
    ) -> PromptView:
        """Every allowed tool, no menu: what a client shows when :meth:`prepare` itself failed.

        A disabled loader shows the descriptions unchanged (``boilerplate_once`` is tooltray's).
        """
        allowed = self.registry.allowed()
        shown = allowed if mode == "disabled" else self.catalog.shown(allowed)
        return all_tools_view(session_id, turn, mode, self.settings, shown, eager_tokens)

    # ----- tool calls ------------------------------------------------------------------------

    def meta_tools(self) -> list[ToolSpec]:
        """The meta-tools' specs (they lead ``tools=`` in selected mode)."""
        return meta_tool_specs()

    def is_meta(self, name: str) -> bool:
        """True for load_tools, unload_tools, fallback and read_result."""
        return name in META_TOOL_NAMES

    def unwrap(self, name: str, arguments: Any) -> tuple[str, Any]:
        """The tool a call really names: ``call_tool``'s inner tool and its arguments (as a JSON
        string when the call's were one), else the call as given. Revealed tools are not in
        ``tools=``, so a native model reaches them through that bridge; a loop that runs tools
        itself unwraps each call first.

        Raises:
            MetaToolArgumentError: a ``call_tool`` call without a usable tool name.
        """
        if name != CALL_TOOL:
            return name, arguments
        inner, args = parse_bridge(arguments)
        return inner, json.dumps(args) if isinstance(arguments, str) else args

    def handle_meta(self, session_id: str, name: str, arguments: Any) -> str:
        """Run a meta-tool call and return the short text for the model; never raises for any
        name or arguments (an unusable session id raises :class:`InputError`)."""
        return self.run_meta(session_id, name, arguments)[0]

    def run_meta(self, session_id: str, name: str, arguments: Any) -> tuple[str, bool]:
        """:meth:`handle_meta`'s text, and whether the call was refused (unusable arguments or
        not a meta-tool): a protocol with an error flag, MCP's ``isError``, must set it.

        The same pipeline as :meth:`prepare`: the session read, the meta-tool's handler (one per
        name) decides, the decision is stored once and its signals sent after the commit.
        """
        session_id = inputs.session_id(session_id)
        name, arguments = inputs.meta_call(name, arguments)
        with self._lock, self.journal.call():
            state = self._state(session_id)
            cat = self.catalog
            # the bundles the session's own menu names (none where no client reads a menu)
            named = cat.menu_for(state.snapshot.meta)[1] if self.shows_menu else frozenset()
            call = MetaCall(
                name,
                arguments,
                self.registry,
                state,
                partial(self._search, state),  # lexical while the embedder is down
                partial(self.shelf.read_as, session_id),
                self.settings.hard_max_tools,
                lambda: "listing" if self._defers(state) else cat.fallback_answer(named),
                partial(frozenset, named),
            )
            try:
                out = HANDLERS.get(name, not_meta)(call)
            except MetaToolArgumentError as exc:
                self._apply(state, decide.refused_meta(state.snap(), name, str(exc)))
                return f"Error: {exc}", True
            self._apply(state, decide.meta(state.snap(), out))
            return self._revealed(state, out.added, out.text), False

    def degrade_reveal(
        self, session_id: str, reason: str, to: Literal["bridge", "exchange"] = "bridge"
    ) -> None:
        """The provider refused how this session reveals (a 400 on an unsupported model or
        beta): from now on reveal through the ``call_tool`` bridge and notes (``to="bridge"``:
        deferral refused) or the synthetic ``load_tools`` exchange (``to="exchange"``:
        ``tool_addition`` refused), so the turn is sent again rather than failed. Logged once
        and recorded as a ``degraded`` event."""
        session_id, reason = inputs.session_id(session_id), inputs.text(reason)
        with self._lock, self.journal.call():
            state = self._state(session_id)
            s, meta = self.settings, state.snapshot.meta
            adding = adds(s.path, s.reveal, s.tool_addition, meta)
            if not (adding if to == "exchange" else self._defers(state)):
                return  # already stepped down (or never revealed that way)
            refused, how, flag = STEP_DOWN[to]
            log.warning("tooltray session %s: %s refused, using %s", session_id, refused, how)
            event = self._event(state, "degraded", None, f"reveal: {reason}"[:500])
            self.journal.commit(state, Changes(meta=flag, events=[event]))

    def refuse(self, session_id: str, tool: str, reason: str) -> None:
        """Record that a call to ``tool`` was refused (not allowed, unknown, bad arguments)."""
        session_id, tool, reason = (
            inputs.session_id(session_id),
            inputs.text(tool),
            inputs.text(reason),
        )
        with self._lock, self.journal.call():
            state = self._state(session_id)
            event = self._event(state, "refused", tool[:64], reason[:500])
            self.journal.commit(state, Changes(events=[event]))

    def follow(self, session_id: str, used: Sequence[str]) -> tuple[list[str], str]:
        """After the session called ``used``, load what those calls point to next
        (:meth:`AllowedCatalog.follow`), appended like a later turn's growth: for a client that
        sends no user text between calls (an MCP gateway). Returns the names loaded and, with
        ``reveal = "append"``, their listing for a client that does not relist (else ``""``).
        Nothing for a session whose selection is off (disabled, degraded, ``all``).

        Raises:
            TooltrayError: selection failed (the embedder is down, say); nothing was loaded.
        """
        session_id = inputs.session_id(session_id)
        with self._lock, self.journal.call():
            state = self._state(session_id)
            picks = self.catalog.follow(state, used) if state.health == "ok" else []
            if not picks:
                return [], ""
            names = [c.name for c in picks]
            self._apply(state, decide.followed(state.snap(), picks, self.settings.reveal))
            log.info("%s turn %d follows %s: %s", session_id, state.turn, list(used), names)
            return names, self._revealed(state, names)

    def shorten(self, session_id: str, tool: str, result: str) -> str:
        """A long result shortened with a handle (full text stored); short ones unchanged."""
        session_id, tool, result = (
            inputs.session_id(session_id),
            inputs.text(tool),
            inputs.text(result),
        )
        with self._lock:
            state = self._state(session_id)
            return self.shelf.shorten(session_id, state.turn, tool, result)

    def flush(self, session_id: str | None = None) -> None:
        """Store deferred tool-used records now (one session, or every live one)."""
        with self._lock:
            ids = [session_id] if session_id else list(self._sessions)
            for sid in ids:
                if sid in self._sessions:
                    self.journal.commit(self._sessions[sid], Changes())

    # ----- signal receivers ------------------------------------------------------------------

    def _on_tool_used(self, sender: Any, payload: p.ToolUsed, **_: Any) -> None:
        with self._lock:
            state = self._sessions.get(str(sender))
            if state is None or not self.enabled or payload.tool in META_TOOL_NAMES:
                return
            allowed = self.registry.is_allowed(payload.tool)
            if allowed and self.settings.learn == "on":
                state.taught.append(payload.tool)
            turn = payload.turn or state.turn
            # outside a call: durable at once, a kill must not lose it
            self._apply(state, decide.used(state.snap(), payload.tool, turn, allowed))

    def _on_tools_registered(self, sender: Any, payload: p.ToolsRegistered, **_: Any) -> None:
        """Near duplicates of tools registered at run time: logged, and recorded in each session."""
        from tooltray.memory.core.registration import as_events, near_duplicates

        with self._lock, self.journal.call():
            found = near_duplicates(payload.tools, self.registry, self.settings, self.store)
            for state in list(self._sessions.values()) if found else []:
                rows = as_events(state.session_id, state.turn, found)
                self.journal.commit(state, Changes(events=rows))

    def _on_turn_completed(self, sender: Any, payload: p.TurnCompleted, **_: Any) -> None:
        with self._lock, self.journal.call():
            state = self._sessions.get(str(sender))
            if state is None or not self.enabled:
                return
            turn = max(payload.turn, state.turn)  # 0 (not given): the turn prepare last saw
            usage = self._meters[state.session_id].close(state.turn, payload.usage)
            learn = self._lesson(state, turn)
            snap, learned = state.snap(), state.learned_upto
            self._apply(state, decide.completed(snap, turn, usage, learn, learned))

    def _pending_lesson(self, state: SessionState) -> list[str]:
        """A rehydrated session's tools used in its current turn, when that turn's lesson is not
        stored yet: a process that restarts mid-turn learns at turn end what the uninterrupted
        one would have (the uses are stored; only the in-memory list was lost)."""
        snap = state.snapshot
        if self.settings.learn != "on" or state.learned_upto >= snap.turn:
            return []
        used = [t for t in snap.loaded if t.last_used_turn == snap.turn]
        return [t.name for t in used if self.registry.is_allowed(t.name)]

    def _lesson(self, state: SessionState, turn: int) -> Learning | None:
        """What the finished turn teaches (allowed tools it used, its request's vector, what
        each of its searches led to)."""
        tools, state.taught = state.taught, []
        if not tools:  # the request stays pending: its tools may be called a turn later
            return None
        asked, state.learned_upto = self.catalog.request(state.unlearned), len(state.user_texts)
        searched, state.searches = led_to(state.searches, tools, self.catalog.query_vector), []
        return lesson(self.settings, turn, tools, *asked, searched)

    def _on_compacted(self, sender: Any, payload: p.ContextCompacted, **_: Any) -> None:
        with self._lock, self.journal.call():
            state = self._sessions.get(str(sender))
            if state is None or not self.enabled:
                return
            turn = max(payload.turn or 0, state.turn)
            idle, reveal = self.settings.idle_turns, self.settings.reveal
            menu = self._pin()
            self._apply(state, decide.compacted(state.snap(), turn, idle, reveal, menu))

    # ----- internals -------------------------------------------------------------------------

    def _event(
        self,
        state: SessionState,
        kind: EventKind,
        tool: str | None = None,
        detail: str | None = None,
    ) -> HistoryEvent:
        return HistoryEvent(state.session_id, state.turn, kind, tool=tool, detail=detail)

    def _keep(self, state: SessionState) -> None:
        """Hold ``state`` live and listen to its session's signals only (not other trinkets')."""
        self._sessions[state.session_id] = state
        for signal, receiver in self._receivers:
            signal.connect(receiver, sender=state.session_id)

    def _forget(self, session_id: str) -> None:
        """Drop the live state and its meter, and stop listening to its session."""
        self._meters.pop(session_id, None)
        if self._sessions.pop(session_id, None) is not None:
            for signal, receiver in self._receivers:
                signal.disconnect(receiver, sender=session_id)

    def _usable(self) -> bool:
        """Whether sessions are read from the store: the loader is on and its database opened."""
        return self.enabled and self.store_error is None

    def _state(self, session_id: str) -> SessionState:
        """The live state: from memory, else rehydrated from the store, else a new session."""
        state = self._sessions.get(session_id)
        if state is not None:
            return state
        try:
            snapshot = self.journal.fetch(session_id) if self._usable() else None
        except StoreError as exc:
            state = self.journal.unread(session_id, exc)
            self._keep(state)
            return state
        state = SessionState(session_id, snapshot or empty_snapshot(session_id))
        state.marks = Marks(grown_turn=grown_turn(state.snapshot))
        state.learned_upto = learned_upto(state.snapshot)
        state.taught = self._pending_lesson(state)
        self._keep(state)
        if not self.enabled:
            state.health = "disabled"
        elif self.store_error is not None:
            self._degrade(state, "store", self.store_error)
        elif snapshot is None:
            self._start(state, fresh=True)
        return state

    def _pin(self) -> PinnedMenu | None:
        """The menu a boundary pins (``None`` where the model never reads it: a gateway's MCP
        client is shown tools, not the system text)."""
        return self.catalog.pin() if self.shows_menu else None

    def _start(self, state: SessionState, fresh: bool = False) -> None:
        """Start ``state``'s session; a ``fresh`` start is stored only if no process beat us."""
        menu = self._pin()
        self._apply(
            state, decide.start(state.snap(), self.settings.idle_turns, fresh=fresh, menu=menu)
        )

    def _prepare(self, state: SessionState, messages: list[dict[str, Any]]) -> PromptView:
        """The turn as a pipeline: the session and the conversation read, the catalog's scores
        asked once, one pure decision (its view's record included) applied with the call's one
        transaction, its signals sent after it."""
        if state.health == "disabled":
            return self.all_tools_view(state.session_id, state.turn, "disabled", self._eager())
        conv = Conversation.of(messages)
        if self.settings.learn == "on" and conv.users:
            state.user_texts = list(conv.users)
        snap = state.snap()
        turn = decide.owed(snap, conv, self.settings.growth)
        scores = self._scores(state, turn, conv)
        dec = decide.on_prepare(turn, conv, scores, self.catalog, self.settings.reveal)
        after = snap.after(dec)
        if state.health == "degraded":  # every tool while degraded, else its selection
            view = self.all_tools_view(
                state.session_id, after.snapshot.turn, "degraded", self._eager()
            )
        else:
            view = selected_view(after.snapshot, self.settings, self.registry, self.catalog)
        self._apply(state, dec + decide.record_turn(after, view))
        if dec.plan is not None and dec.plan.loads and log.isEnabledFor(logging.INFO):
            _log_plan(state, dec.plan)
        self._meters[state.session_id].observe(view, messages)
        return view

    def _apply(self, state: SessionState, dec: Decision) -> None:
        """Stage a decision's changes in the open call (stored in its one transaction), take its
        marks, and queue its notices for after the commit."""
        for changes in dec.changes:
            self.journal.commit(state, changes)
        if dec.marks is not None:
            state.marks = dec.marks
        self.journal.notify(state.session_id, dec.notices)

    def _eager(self) -> int:
        return self.catalog.eager_tokens()

    def _may_recover(self, state: SessionState, snap: Snap) -> bool:
        """Whether a degraded session tries selection again now: at most once a turn, at its start.

        Selection changes only between turns, so the tools never shrink under the model in the
        middle of one. The loaded set was kept through the outage (plus what the model loaded or
        called), so recovering costs one prefix change back to it and growth appends as usual.
        A session whose stored state is still unread, or a trinket whose database could not be
        opened, stays degraded.
        """
        grown = snap.marks.grown_turn == snap.snapshot.turn
        if state.unread or self.store_error is not None or grown:
            return False
        state.health = "ok"
        return True

    def _scores(self, state: SessionState, turn: Owed, conv: Conversation) -> Scores | Fault | None:
        """The catalog's scores for the selection the turn owes (``None``: none owed); a
        degraded session that waits, or a scoring fault, is a :class:`Fault` that degrades the
        session (every tool) and takes the turn's growth mark all the same."""
        snap = turn.snap
        if state.health == "degraded" and not self._may_recover(state, snap):
            return Fault(replace(snap.marks, grown_turn=snap.snapshot.turn))
        if turn.due is None:
            return None
        try:
            scores = self.catalog.scores(snap.snapshot, conv.users, turn.due)
        except TooltrayError as exc:
            detail = self._outage(state, "selection", exc, snap.snapshot.turn)
            return Fault(turn.due.marks, detail)
        if state.warned:  # an outage to call over
            recovered(state, "selection")
        return scores

    def _revealed(self, state: SessionState, added: Sequence[str], text: str = "") -> str:
        """``text`` (a meta-tool's answer) and what it appends with ``reveal = "append"``: the
        loaded tools' listing, since they are not in ``tools=`` (the conversation keeps it). A
        listing of every tool the answer loaded (none was in the prefix) stands for their names
        in the answer, which then says how many."""
        s, meta = self.settings, state.snapshot.meta
        prefix = meta.get("prefix")
        if s.reveal != "append" or prefix is None or not added or defers(s.path, s.reveal, meta):
            return text
        inside = set(prefix)
        fresh = [*filterfalse(inside.__contains__, added)]  # no comprehension: one code object
        shown = note(self.catalog.shown(self.catalog.prepared().pick(fresh)), s.path != "text")
        if not shown:
            return text
        if len(fresh) == len(added):
            listed = LISTED.format(len(added), "s" if len(added) > 1 else "")
            text = text.replace(LOADED.format(", ".join(added)), listed, 1)
        return f"{text}\n{shown}"

    def _defers(self, state: SessionState) -> bool:
        """Whether the provider reveals this session's tools (its search answer, no note)."""
        return defers(self.settings.path, self.settings.reveal, state.snapshot.meta)

    def _search(self, state: SessionState, query: str) -> list[Candidate]:
        """The catalog's search for ``load_tools``; lexical while the embedder is down."""
        loaded = set(state.snapshot.names())
        if self.settings.learn == "on":  # what it leads to is learned at the turn's end
            state.searches.append((query, frozenset(loaded.union(state.taught))))
        try:
            return self.catalog.search(query, loaded, (state.session_id, state.unlearned))
        except TooltrayError as exc:
            self._degrade(state, "selection", exc)
            return self.catalog.search_lexically(query, loaded)

    def _degrade(self, state: SessionState, reason: str, exc: Exception) -> None:
        """Expose every tool; the outage is logged and recorded once, not on every retry."""
        detail = self._outage(state, reason, exc)
        if detail is not None:
            degraded = self._event(state, "degraded", None, detail)
            self.journal.commit(state, Changes(events=[degraded]))

    def _outage(
        self, state: SessionState, reason: str, exc: Exception, turn: int | None = None
    ) -> str | None:
        """Degrade ``state`` (every tool is shown) and warn once an outage (at ``turn``, the
        decided turn, while it is not applied yet): the history row's detail for its first
        fault, ``None`` when it is recorded already (or disabled)."""
        if state.health == "disabled":
            return None
        state.health = "degraded"
        if reason in state.warned:
            return None
        warn(state, reason, exc, turn)
        return f"{reason}: {exc}"[:500]


def _log_plan(state: SessionState, plan: Plan) -> None:
    """Why a plan loads what it loads, at INFO."""
    why = ", ".join(f"{c.name} ({c.source} {c.score or 0:.2f})" for c in plan.loads)
    log.info("%s turn %d %s: %s", state.session_id, state.turn, plan.mode, why)
