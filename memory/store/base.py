"""The store protocol: what the working memory asks of durable state, whatever keeps it.

Two implementations: :class:`~tooltray.memory.store.store.Store` (SQLAlchemy: a SQLite file or
PostgreSQL, shared by processes) and :class:`~tooltray.memory.store.memory.MemoryStore` (this
process only: a loader that is switched off, a database that cannot be opened, tests). The
trinket and the result shelf talk to this protocol, so neither branches on whether a database
exists; the contract tests run the same suite over every implementation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from tooltray.memory.store.records import (
    Changes,
    HistoryEvent,
    LearnClock,
    LearnedMate,
    PastRequest,
    PruneReport,
    SessionInfo,
    SessionSnapshot,
    TurnRecord,
)

if TYPE_CHECKING:
    from numpy import float32
    from numpy.typing import NDArray


@runtime_checkable
class BaseStore(Protocol):
    """Sessions, their loaded sets and history, turn records, what finished turns taught
    (written by :meth:`apply` with the turn, read back by learning: their requests, co-use and
    searches), cached vectors and long results.

    Every method either does what it says or raises :class:`~tooltray.tools.errors.StoreError`
    naming the fix; a change is applied whole or not at all.
    """

    def apply(self, session_id: str, changes: Changes | Sequence[Changes]) -> SessionSnapshot:
        """Apply ``changes`` to ``session_id`` in one transaction; return the stored result.

        A sequence is one public call's change set: its steps apply in order, each with its
        own guards, all in the one transaction.
        """

    def reading(self) -> AbstractContextManager[None]:
        """Let the reads inside share one read transaction (one public call's reads)."""

    def snapshot(self, session_id: str) -> SessionSnapshot | None:
        """The session as stored (``None`` if it was never written)."""

    def history(self, session_id: str, since_id: int | None = None) -> list[HistoryEvent]:
        """The session's history in write order (after ``since_id`` when given)."""

    def turns(self, session_id: str) -> list[TurnRecord]:
        """The session's turn records in turn order."""

    def sessions(self) -> list[SessionInfo]:
        """Every stored session, most recently updated first."""

    def get_embeddings(
        self, embedder_id: str, hashes: Sequence[str]
    ) -> dict[str, NDArray[float32]]:
        """Cached vectors of ``embedder_id`` for the given content hashes (missing ones absent)."""

    def put_embeddings(self, embedder_id: str, vectors: Mapping[str, NDArray[Any]]) -> None:
        """Cache ``vectors`` (hash -> 1-D vector); already cached hashes are kept."""

    def put_result(self, handle: str, session_id: str, turn: int, tool: str, content: str) -> None:
        """Keep the full text of a tool result under ``handle`` (putting it again replaces it)."""

    def get_result(self, handle: str) -> str | None:
        """The full text stored under ``handle``, or ``None``."""

    def learned_mates(
        self, tools: Sequence[str], min_share: float
    ) -> tuple[list[LearnedMate], LearnClock]:
        """Learned co-use mates of ``tools`` with at least ``min_share`` of a tool's own weight,
        and the clock their weights are read at (one read)."""

    def past_requests(self, after: int) -> tuple[LearnClock, list[PastRequest]]:
        """The clock, and the learned turns with a vector and an id above ``after``, oldest
        first (none when nothing newer was learned)."""

    def past_searches(self, after: int) -> tuple[LearnClock, list[PastRequest]]:
        """The learned ``load_tools`` searches' clock (their newest and oldest ids; epoch 0),
        and those with an id above ``after``, oldest first, each with the tools its turn then
        used (:class:`~tooltray.memory.store.records.LearnedSearch`)."""

    def prune(self, before: datetime) -> PruneReport:
        """Drop ``history`` and ``turns`` rows written before ``before`` (aware, UTC) in one
        transaction; sessions, loaded sets and what was learned stay."""

    def close(self) -> None:
        """Release what the store holds open (its state may outlive this object)."""
