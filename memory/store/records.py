"""Plain records that cross the store boundary: what the trinket reads and what it asks to change.

The store turns a :class:`Changes` into one transaction and answers with a fresh
:class:`SessionSnapshot`, so the trinket's view is always what the database holds (several
processes may share one session).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, TypedDict, cast

Source = Literal[
    "core", "pinned", "skill", "semantic", "lexical", "escape", "manual", "fallback", "all"
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
    """

    selected: bool
    mode: SelectionMode
    grown: int
    learned: int
    prefix: list[str]
    reveals: list[list[Any]]
    bridged: bool
    addition_refused: bool


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
        unless: Mapping[str, object] = self.unless or {}
        stored: Mapping[str, object] = meta
        return any(stored.get(key) == value for key, value in unless.items())

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
        return [t.name for t in self.loaded]


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
    co-use weights count from (see :mod:`tooltray.memory.store.learned`)."""

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
