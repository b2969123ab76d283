"""What crosses the store boundary, and the rules a change follows, without SQL.

The trinket reads a :class:`SessionSnapshot` and asks for a :class:`Changes`; the store applies it
in one transaction and answers with a fresh snapshot, so the trinket's view is always what the
database holds (several processes may share one session). :func:`apply_local` mirrors that
transaction exactly and :class:`LearnedTables` the learned tables' rules, so the in-memory store
behaves as SQLite or PostgreSQL would, and the trinket can keep a turn alive on the last known set
while the database is unreachable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from itertools import permutations, product
from operator import attrgetter
from typing import Any, Literal, TypedDict, cast

Source = Literal[
    "core",
    "pinned",
    "skill",
    "semantic",
    "lexical",
    "escape",
    "manual",
    "fallback",
    "all",
    "usage",
    "implicit",
]
EventKind = Literal[
    "loaded",
    "unloaded",
    "used",
    "escape",
    "fallback",
    "evicted",
    "refused",
    "degraded",
    "selected",
    "compacted",
    "near-duplicate",
    "started",
    "resumed",
    "ended",
]


SelectionMode = Literal["selected", "all"]


PinnedMenu = dict[str, str]
"""A session's pinned bundle menu (:attr:`SessionMeta.menu`)."""


class SessionMeta(TypedDict, total=False):
    """A session's control flags, stored as JSON beside its counters.

    Attributes:
        selected: the first selection (made with a user message) is stored.
        mode: what it decided: a ``selected`` subset, or ``all`` tools (a small catalog).
        grown: the last turn whose growth is stored, so a restart does not grow it again.
        learned: how many of the conversation's user messages stored lessons covered, so the
            next lesson's request is found among the later ones after a restart too.
        prefix: the tools in the prompt prefix since the last boundary, in ``tools=`` order
            (``reveal = "append"``); loaded tools not in it are revealed at the context's end.
        reveals: tooltray's own reveals since that boundary, ``[user turn, [names]]`` each: woven
            before that turn's user message in every later request, so they stay byte-stable
            and come back after a restart.
        bridged: the provider refused deferred tools for this session (a 400 on an unsupported
            model or beta): its reveals go through the ``call_tool`` bridge from then on.
        addition_refused: the model refused ``tool_addition`` blocks (``tool_addition``
            setting): its reveals are the synthetic ``load_tools`` exchange from then on.
        menu: the bundle menu pinned at the last boundary, ``{"of": <allowed catalog's
            fingerprint>, "text": <menu>}``: shown until the next one while the catalog is
            the same, whatever menu the process serving a call decided.
    """

    selected: bool
    mode: SelectionMode
    grown: int
    learned: int
    prefix: list[str]
    reveals: list[list[Any]]
    bridged: bool
    addition_refused: bool
    menu: PinnedMenu


def as_meta(stored: object) -> SessionMeta:
    """The meta column as read back from the database (JSON: a dict, or NULL)."""
    return cast(SessionMeta, dict(stored) if isinstance(stored, Mapping) else {})


@dataclass(frozen=True)
class LoadedTool:
    """One tool in a session's loaded set; ``position`` fixes its place in ``tools=``."""

    name: str
    position: int
    loaded_turn: int
    last_used_turn: int | None
    source: Source
    score: float | None = None
    fallback: bool = False


@dataclass(frozen=True)
class HistoryEvent:
    """One append-only history row (never updated, never deleted)."""

    session_id: str
    turn: int
    kind: EventKind
    tool: str | None = None
    source: Source | None = None
    score: float | None = None
    detail: str | None = None
    at: datetime | None = None
    id: int | None = None


@dataclass(frozen=True)
class TurnRecord:
    """What one turn looked like from the model's side."""

    session_id: str
    turn: int
    prefix_hash: str
    tool_tokens: int
    loaded_count: int
    eager_tokens: int | None = None
    at: datetime | None = None
    prompt_reused: int | None = None
    prompt_new: int | None = None
    usage_cached: int | None = None
    usage_uncached: int | None = None
    usage_output: int | None = None


@dataclass(frozen=True)
class TurnUsage:
    """A finished turn's prompt tokens, written onto its ``turns`` row when it completes.

    ``prompt_reused`` / ``prompt_new``: tooltray's estimate over the turn's model calls (each
    prompt as the trinket rendered it, split at the first part that differs from the previous
    call's); ``usage_*``: what the provider reported, when the agent passed it (else ``None``).
    """

    turn: int
    prompt_reused: int | None = None
    prompt_new: int | None = None
    usage_cached: int | None = None
    usage_uncached: int | None = None
    usage_output: int | None = None

    def values(self) -> dict[str, int | None]:
        """The columns to write (the turn itself is the row's key)."""
        return {
            "prompt_reused": self.prompt_reused,
            "prompt_new": self.prompt_new,
            "usage_cached": self.usage_cached,
            "usage_uncached": self.usage_uncached,
            "usage_output": self.usage_output,
        }


def with_usage(record: TurnRecord, usage: TurnUsage) -> TurnRecord:
    """``record`` with ``usage``'s columns written onto it (what the database's update does)."""
    return replace(
        record,
        prompt_reused=usage.prompt_reused,
        prompt_new=usage.prompt_new,
        usage_cached=usage.usage_cached,
        usage_uncached=usage.usage_uncached,
        usage_output=usage.usage_output,
    )


@dataclass(frozen=True)
class Load:
    """Append ``name`` to the loaded set (no-op if already loaded, except fallback->real)."""

    name: str
    source: Source
    turn: int
    score: float | None = None
    fallback: bool = False


@dataclass(frozen=True)
class Unload:
    """Remove ``name`` from the loaded set; ``kind`` is its history kind (unloaded, evicted)."""

    name: str
    kind: EventKind = "unloaded"


@dataclass(frozen=True)
class Use:
    """``name`` was called at ``turn``: ``last_used_turn`` becomes max(old, turn)."""

    name: str
    turn: int


@dataclass(frozen=True)
class Learning:
    """What one finished turn teaches selection: the tools it used and its user message's vector.

    ``tools`` holds only tools the agent was allowed to use and did use (refused, denied and
    fallback-only loads never get here). ``vector`` is the float32 bytes of the L2-normalised
    query embedding (``None``: embedder down, only co-use is learned); ``text`` stays ``None``
    unless ``learn_keep_text`` is on. The bounds and half-life travel with it because the store
    has no settings of its own.
    """

    turn: int
    tools: tuple[str, ...]
    vector: bytes | None = None
    embedder_id: str | None = None
    text: str | None = None
    half_life: float = 2000.0
    max_requests: int = 10_000
    max_pairs: int = 50_000
    searches: tuple[LearnedSearch, ...] = ()


@dataclass(frozen=True)
class LearnedSearch:
    """One ``load_tools`` search of a finished turn and the tools the turn then used that came
    after it (loaded by it or later, before the next search): what its text led to. ``vector``
    is the float32 bytes of the query's L2-normalised embedding; ``text`` stays ``None`` unless
    ``learn_keep_text`` is on."""

    tools: tuple[str, ...]
    vector: bytes
    embedder_id: str
    text: str | None = None


@dataclass
class Changes:
    """Everything one trinket step changes, applied by the store in one transaction.

    ``turn`` only ever moves the session counter forward (max). ``events`` are appended as
    given; loads, unloads and uses also write their own history rows. ``learn`` (turn end, with
    learning on) updates the learned tables in the same transaction; it has no effect on the
    session itself, so :func:`~tooltray.memory.core.session.apply_local` ignores it.

    Two guards make one-time steps idempotent when several processes (or a restarted one) race
    to take them: ``only_new`` (a session start) applies only if the session did not exist yet,
    and ``unless`` skips the change when the stored meta already holds one of its values (a
    selection another process made first). A skipped change writes nothing but its ``vectors``.
    """

    turn: int | None = None
    loads: list[Load] = field(default_factory=list)
    unloads: list[Unload] = field(default_factory=list)
    uses: list[Use] = field(default_factory=list)
    events: list[HistoryEvent] = field(default_factory=list)
    turn_record: TurnRecord | None = None
    status: str | None = None
    meta: SessionMeta | None = None
    only_new: bool = False
    unless: SessionMeta | None = None
    learn: Learning | None = None
    usage: TurnUsage | None = None
    vectors: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Document vectors the call embedded (embedder id -> content hash -> vector): the embedding
    cache, written in the same transaction whatever the guards say; no effect on the session."""

    def skipped(self, meta: SessionMeta, existed: bool) -> bool:
        """True when a guard says this change was already made (by another process)."""
        if self.only_new and existed:
            return True
        if not self.unless:
            return False
        stored: Mapping[str, object] = meta
        return any(stored.get(key) == value for key, value in self.unless.items())

    def empty(self) -> bool:
        """True when applying would change nothing."""
        return not (
            self.turn is not None
            or self.loads
            or self.unloads
            or self.uses
            or self.events
            or self.turn_record
            or self.status
            or self.meta
            or self.learn
            or self.usage
            or self.vectors
        )


@dataclass(frozen=True)
class SessionSnapshot:
    """A session as stored: its turn counter, status, meta and loaded set in position order."""

    session_id: str
    turn: int
    status: str
    loaded: tuple[LoadedTool, ...]
    meta: SessionMeta
    created_at: datetime | None = None
    updated_at: datetime | None = None

    def names(self) -> list[str]:
        """Loaded tool names in ``tools=`` order."""
        return list(map(attrgetter("name"), self.loaded))


@dataclass(frozen=True)
class SessionInfo:
    """One line of the session list: counters without the loaded set itself."""

    session_id: str
    turn: int
    status: str
    loaded_count: int
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True)
class PruneReport:
    """How many raw rows a prune removed (``history`` and ``turns``)."""

    history: int
    turns: int


@dataclass(frozen=True)
class LearnClock:
    """Where the learned state stands: the newest and oldest learned ids, and the epoch the
    co-use weights count from (see :mod:`tooltray.memory.store.tables`)."""

    newest: int
    oldest: int
    epoch: int


@dataclass(frozen=True)
class LearnedMate:
    """One learned co-use pair read back: ``mate``'s weight with ``tool`` and ``tool``'s own."""

    tool: str
    mate: str
    weight: float
    own: float


@dataclass(frozen=True)
class PastRequest:
    """One learned past turn with a vector: the tools its request led to, in its session."""

    id: int
    tools: tuple[str, ...]
    dim: int | None
    vector: bytes | None
    session_id: str


def empty_snapshot(session_id: str) -> SessionSnapshot:
    """A session the store has never seen."""
    now = datetime.now(timezone.utc)
    return SessionSnapshot(session_id, 0, "active", (), {}, now, now)


def _apply_loads(tools: list[LoadedTool], changes: Changes) -> list[LoadedTool]:
    by_name = {t.name: i for i, t in enumerate(tools)}
    position = max((t.position for t in tools), default=-1) + 1  # the next one appended
    for load in changes.loads:
        if load.name in by_name:
            i = by_name[load.name]
            if tools[i].fallback and not load.fallback:
                tools[i] = replace(tools[i], fallback=False, source=load.source, score=load.score)
            continue
        by_name[load.name] = len(tools)
        tools.append(
            LoadedTool(load.name, position, load.turn, None, load.source, load.score, load.fallback)
        )
        position += 1
    return tools


def apply_local(snapshot: SessionSnapshot, changes: Changes) -> SessionSnapshot:
    """Apply ``changes`` to ``snapshot`` with the store's rules (append-only order, max turn).

    Only the store knows whether a session already existed, so ``only_new`` is left to it.
    """
    if changes.skipped(snapshot.meta, existed=False):
        return snapshot
    tools = list(snapshot.loaded)  # each part below runs only when the change has some
    if changes.unloads:
        gone = {u.name for u in changes.unloads}
        tools = [t for t in tools if t.name not in gone]
    if changes.loads:
        tools = _apply_loads(tools, changes)
    used: dict[str, int] = {}
    for use in changes.uses:
        used[use.name] = max(use.turn, used.get(use.name, use.turn))
    if used:
        tools = [
            replace(t, last_used_turn=max(used[t.name], t.last_used_turn or 0))
            if t.name in used
            else t
            for t in tools
        ]
    meta: SessionMeta = {**snapshot.meta, **(changes.meta or {})}
    return replace(
        snapshot,
        turn=max(snapshot.turn, changes.turn or 0),
        status=changes.status or snapshot.status,
        loaded=tuple(tools),
        meta=meta,
        updated_at=datetime.now(timezone.utc),
    )


def history_rows(before: SessionSnapshot, changes: Changes) -> list[HistoryEvent]:
    """The history rows :meth:`Store.apply` writes for ``changes`` on ``before``, in its order.

    Unloads of loaded tools, then loads that add a tool or upgrade a fallback, then every use,
    then the events as given (filed under this session, as the database files them).
    """
    sid, turn = before.session_id, max(before.turn, changes.turn or 0)
    loaded = {t.name: t.fallback for t in before.loaded}
    rows: list[HistoryEvent] = []
    for unload in changes.unloads:
        if loaded.pop(unload.name, None) is not None:
            rows.append(HistoryEvent(sid, turn, unload.kind, tool=unload.name))
    for load in changes.loads:
        was_fallback = loaded.get(load.name)
        if was_fallback is None or (was_fallback and not load.fallback):
            loaded[load.name] = load.fallback
            kind: EventKind = "fallback" if load.fallback else "loaded"
            rows.append(HistoryEvent(sid, load.turn, kind, load.name, load.source, load.score))
    rows += [HistoryEvent(sid, use.turn, "used", tool=use.name) for use in changes.uses]
    return rows + [replace(e, session_id=sid) for e in changes.events]


REBASE_AT = 512.0
"""Exponent (in half-lives) at which every weight is rescaled; 2**512 is far from overflow."""
KEEP_SHARE = 0.9
"""Share of ``max_pairs`` an over-full pairs table is cut back to (the weakest rows go)."""


def pairs(tools: list[str], previous: list[str]) -> list[tuple[str, str]]:
    """(tool, mate) pairs one turn teaches: each tool with itself, same-turn mates both ways,
    and previous-turn tools both ways (a token fetched one turn, used the next)."""
    before = set(previous) - set(tools)
    out = {*zip(tools, tools, strict=True), *permutations(tools, 2)}
    out.update(product(tools, before), product(before, tools))
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
        self._searches: dict[int, PastRequest] = {}
        self._last_id = self._last_search = 0
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
        for search in filter(attrgetter("tools"), lesson.searches):
            self._last_search += 1
            dim = len(search.vector) // 4
            row = PastRequest(self._last_search, search.tools, dim, search.vector, session_id)
            self._searches[row.id] = row
        if len(self._searches) > lesson.max_requests:  # the newest max_requests stay
            cut = self._last_search - lesson.max_requests
            self._searches = {i: r for i, r in self._searches.items() if i > cut}

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

    def searches(self, after: int) -> tuple[LearnClock, list[PastRequest]]:
        """The searches' clock (newest and oldest ids) and their rows above ``after``."""
        ids = self._searches.keys()
        clock = LearnClock(max(ids, default=0), min(ids, default=0), 0)
        return clock, [r for i, r in sorted(self._searches.items()) if i > after]

    def requests(self, after: int) -> list[PastRequest]:
        """Rows with a vector and an id above ``after``, oldest first."""
        rows = (r.row for i, r in sorted(self._requests.items()) if i > after)
        return [row for row in rows if row.vector is not None]
