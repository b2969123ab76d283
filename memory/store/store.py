"""The store: the one object the trinket talks to for durable state, and its patience with a busy
database.

Every write is one transaction that takes the session's lock (``BEGIN IMMEDIATE`` on SQLite,
``SELECT ... FOR UPDATE`` on PostgreSQL), so several processes can share a session. Lock errors
("database is locked", a serialization failure or deadlock) are retried with backoff and jitter;
anything else, damaged stored values included, is a :class:`StoreError` at once. A busy database
must never hold the agent's turn: :class:`Patience` gives each call a budget (``store_wait``) for
the busy wait and the retries together, and once one call has used it all, later calls try once
until one gets through; the trinket queues what could not be written.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, Engine, delete, select
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from tooltray.memory.store.access import readonly_hint
from tooltray.memory.store.engine import BUSY_MS, IMMEDIATE, is_sqlite, make_engine, sqlite_path
from tooltray.memory.store.migrate import ensure_schema, upgrade_engine
from tooltray.memory.store.probe import display_url, first_line
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
    empty_snapshot,
)
from tooltray.memory.store.tables import (
    HISTORY,
    RESULTS,
    TURNS,
    apply_steps,
    prepare_statements,
    read_history,
    read_sessions,
    read_snapshot,
    read_turns,
    upsert,
    utcnow,
)
from tooltray.memory.store.url import resolve_url
from tooltray.tools.errors import StoreDataError, StoreError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


T = TypeVar("T")

ATTEMPTS = 8
BASE_DELAY = 0.005
MAX_DELAY = 0.5
_SQLITE_BUSY = ("database is locked", "database table is locked", "database is busy")
_PG_RETRY_STATES = {"40001", "40P01", "55P03"}
_BIND_ERRORS = ("binding parameter", "cannot adapt", "type is not supported", "nul (0x00)")
log = logging.getLogger("tooltray")


def is_transient(exc: BaseException) -> bool:
    """True for lock contention, serialization failures and deadlocks (worth another try)."""
    if not isinstance(exc, DBAPIError):
        return False
    state = getattr(exc.orig, "sqlstate", None)
    if state in _PG_RETRY_STATES:
        return True
    message = str(exc.orig).lower()
    return any(text in message for text in _SQLITE_BUSY)


def backoff(attempt: int) -> float:
    """Seconds to wait before retry number ``attempt`` (1-based): exponential, full jitter."""
    return random.uniform(0, min(MAX_DELAY, BASE_DELAY * 2**attempt))


def with_retries(
    fn: Callable[[], T],
    *,
    what: str,
    attempts: int = ATTEMPTS,
    deadline: float | None = None,
    writing: bool = False,
) -> T:
    """Run ``fn`` (one whole transaction), retrying transient failures up to ``attempts`` times
    and, with a ``deadline`` (a :func:`time.monotonic` time), not after it. Each retry is logged
    at DEBUG: a lock that a retry outlasts lost nothing.

    Raises:
        StoreDataError: ``writing`` and a value of the change can never be stored.
        StoreError: the database kept refusing, or failed in a way a retry cannot fix.
    """
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except SQLAlchemyError as exc:
            if not is_transient(exc):
                raise permanent(what, exc, writing) from exc
            left = float("inf") if deadline is None else deadline - time.monotonic()
            if attempt == attempts or left <= 0:
                raise busy(what, attempt, exc) from exc
            log.debug("tooltray store busy, retry %d to %s: %s", attempt, what, first_line(exc))
            time.sleep(min(backoff(attempt), left))
        except (UnicodeError, ValueError, TypeError) as exc:
            if isinstance(exc, TypeError) and not writing:
                raise  # a read's TypeError is a bug, not damage
            raise permanent(what, exc, writing) from exc
    raise AssertionError("unreachable")  # pragma: no cover


def is_data_error(exc: BaseException) -> bool:
    """True for a value the database can never take: bad encoding or type, a broken constraint.

    An outage (a lock, a lost connection, a missing table) is not one: its change may go
    through later, so it is kept; a data error fails the same way on every retry. A stored
    value that does not decode is damage, not the change's fault, and is not one either.
    """
    if isinstance(exc, UnicodeEncodeError | TypeError | DataError | IntegrityError):
        return True
    orig = getattr(exc, "orig", None)
    if isinstance(orig, UnicodeEncodeError | TypeError):
        return True  # a bind value the driver or SQLAlchemy could not convert
    return any(text in str(orig).lower() for text in _BIND_ERRORS)


def permanent(what: str, exc: BaseException, writing: bool) -> StoreError:
    """The error of a failure no retry fixes: a change's bad value, or damage in what is read."""
    if writing and is_data_error(exc):
        return StoreDataError(
            f"could not {what}: a value in the change cannot be stored "
            f"({type(exc).__name__}: {first_line(exc)[:160]})"
        )
    if isinstance(exc, UnicodeError | ValueError | TypeError):
        return StoreError(
            f"could not {what}: a stored value is damaged ({type(exc).__name__}: "
            f"{str(exc)[:120]}); move the database aside or restore a backup"
        )
    return StoreError(f"could not {what}: {readonly_hint(first_line(exc))}")


def busy(what: str, attempts: int, exc: BaseException) -> StoreError:
    """The error of a database that stayed busy through every attempt."""
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    return StoreError(
        f"could not {what}: the database stayed busy after {tries} "
        f"({first_line(exc)}); another process holds it too long, retry later"
    )


@dataclass
class Patience:
    """How long store calls may wait for a busy database, and whether it is known to be busy.

    Args:
        seconds: one call's budget for the busy wait and its retries together.
    """

    seconds: float
    busy: bool = False

    def run(self, fn: Callable[[float], T], *, what: str, writing: bool = False) -> T:
        """Run ``fn(deadline)`` with retries inside the budget; an attempt may block (SQLite's
        busy timeout) until ``deadline``, a :func:`time.monotonic` time. A known-busy database
        gets one attempt, no wait."""
        budget = 0.0 if self.busy else self.seconds
        deadline = time.monotonic() + budget
        attempts = 1 if self.busy else ATTEMPTS
        try:
            out = with_retries(
                partial(fn, deadline),
                what=what,
                attempts=attempts,
                deadline=deadline,
                writing=writing,
            )
        except StoreError as exc:
            self.busy = is_transient(exc.__cause__ or exc)
            raise
        self.busy = False
        return out


DEFAULT_WAIT = 1.0  # seconds; the store_wait setting's default


def _write_vectors(conn: Connection, vectors: dict[str, dict[str, Any]]) -> None:
    """The document vectors a change carries, whatever its guards say (the embedding cache)."""
    from tooltray.memory.store.embeddings import write_embeddings  # numpy: only when needed

    for embedder_id, by_hash in vectors.items():
        write_embeddings(conn, embedder_id, by_hash)


def _open(url: str, auto_upgrade: bool) -> Engine:
    if is_sqlite(url) and sqlite_path(url) is None:  # in-memory: one connection, migrate it
        engine = make_engine(url)
        upgrade_engine(engine)
        return engine
    ensure_schema(url, auto_upgrade=auto_upgrade)
    return make_engine(url)


class Store:
    """Durable sessions, loaded sets, history, turns, embeddings and tool results.

    Args:
        url: SQLAlchemy URL or SQLite file path (``None``: ``TOOLTRAY_DB``, else ``./tooltray.db``).
        auto_upgrade: upgrade an older schema on open instead of refusing it.
        wait: seconds one call may wait for a database another process keeps busy (the
            ``store_wait`` setting); past it the call fails, and the trinket queues the change.

    Raises:
        SchemaVersionError: the schema is older (and ``auto_upgrade`` is off) or newer than ours.
        StoreError: the database is not tooltray's, is corrupt, or cannot be reached.
    """

    def __init__(
        self, url: str | None = None, *, auto_upgrade: bool = False, wait: float = DEFAULT_WAIT
    ) -> None:
        self.url = resolve_url(url)
        self.engine = _open(self.url, auto_upgrade)
        # a store dropped without close() still releases its pooled connections when collected
        weakref.finalize(self, self.engine.dispose)
        prepare_statements(self.engine)
        self._writes, self._reads = Patience(wait), Patience(wait)
        self._shared = threading.local()

    def __repr__(self) -> str:
        return f"Store({display_url(self.url)!r})"

    @property
    def single_connection(self) -> bool:
        """One connection serves every thread (in-memory SQLite): another thread cannot read
        while a call's transaction is open on it, so nothing may read it in the background."""
        return isinstance(self.engine.pool, StaticPool)

    def _write(self, what: str, fn: Callable[[Connection], T]) -> T:
        return self._writes.run(partial(self._once, fn, writer=True), what=what, writing=True)

    def _read(self, what: str, fn: Callable[[Connection], T]) -> T:
        """Run ``fn`` in a transaction that is rolled back: a read never commits. Inside
        :meth:`reading` every read shares that one transaction."""
        if getattr(self._shared, "open", False):
            return self._shared_read(what, fn)
        return self._reads.run(partial(self._once, fn, writer=False), what=what)

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Let the reads inside share one read transaction, begun at the first of them and
        rolled back at the end: one public call reads what it needs (its session, the learned
        signals) in one transaction. Its writes go on their own, after it."""
        if getattr(self._shared, "open", False):
            yield
            return
        self._shared.open, self._shared.conn, self._shared.used = True, None, []
        try:
            yield
        finally:
            conn, self._shared.conn, self._shared.open = self._shared.conn, None, False
            if conn is not None:
                conn.close()
            for embedder_id, hashes in self._shared.used:
                self._touch(embedder_id, hashes)

    def _shared_read(self, what: str, fn: Callable[[Connection], T]) -> T:
        """``fn`` on the shared read connection; a failure ends the sharing (the read is then
        asked again on its own, with the usual patience)."""
        try:
            if self._shared.conn is None:
                options = {IMMEDIATE: False, BUSY_MS: int(self._reads.seconds * 1000)}
                self._shared.conn = self.engine.execution_options(**options).connect()
            return fn(self._shared.conn)
        except SQLAlchemyError:
            conn, self._shared.conn, self._shared.open = self._shared.conn, None, False
            if conn is not None:
                conn.close()
            return self._read(what, fn)

    def _once(self, fn: Callable[[Connection], T], deadline: float, *, writer: bool) -> T:
        """One transaction that waits for another process's lock until ``deadline`` at most."""
        wait = max(0.0, deadline - time.monotonic())
        options = {IMMEDIATE: writer, BUSY_MS: int(wait * 1000)}
        engine = self.engine.execution_options(**options)
        if not writer:
            with engine.connect() as conn:  # rolled back on close: a read never commits
                return fn(conn)
        with engine.begin() as conn:
            return fn(conn)

    def apply(self, session_id: str, changes: Changes | Sequence[Changes]) -> SessionSnapshot:
        """Apply ``changes`` to ``session_id`` in one transaction; return the stored result.

        A sequence (one public call's change set) applies step by step, each with its own
        guards, in the same transaction.
        """
        steps = [changes] if isinstance(changes, Changes) else list(changes)

        def write(conn: Connection) -> SessionSnapshot:
            for changes in steps:
                if changes.vectors:  # most calls embed nothing
                    _write_vectors(conn, changes.vectors)
            if not steps:
                return read_snapshot(conn, session_id) or empty_snapshot(session_id)
            return apply_steps(conn, session_id, steps)

        return self._write(f"apply changes to session {session_id!r}", write)

    def snapshot(self, session_id: str) -> SessionSnapshot | None:
        """The session as stored (``None`` if it was never written); does not read history."""
        return self._read(
            f"read session {session_id!r}", lambda conn: read_snapshot(conn, session_id)
        )

    def history(self, session_id: str, since_id: int | None = None) -> list[HistoryEvent]:
        """The session's history in write order (after ``since_id`` when given)."""
        return self._read(
            f"read the history of {session_id!r}",
            lambda conn: read_history(conn, session_id, since_id),
        )

    def turns(self, session_id: str) -> list[TurnRecord]:
        """The session's turn records in turn order."""
        return self._read(
            f"read the turns of {session_id!r}", lambda conn: read_turns(conn, session_id)
        )

    def sessions(self) -> list[SessionInfo]:
        """Every stored session, most recently updated first."""
        return self._read("list sessions", read_sessions)

    def get_embeddings(
        self, embedder_id: str, hashes: Sequence[str]
    ) -> dict[str, NDArray[np.float32]]:
        """Cached vectors of ``embedder_id`` for the given content hashes (missing ones absent);
        the ones found are recorded as in use (see :mod:`~tooltray.memory.store.embeddings`)."""
        from tooltray.memory.store.embeddings import read_embeddings

        stale: list[str] = []

        def read(conn: Connection) -> dict[str, NDArray[np.float32]]:
            stale.clear()  # a retried read starts again
            return read_embeddings(conn, embedder_id, hashes, stale)

        found = self._read("read cached embeddings", read)
        if stale and getattr(self._shared, "open", False):
            self._shared.used.append((embedder_id, stale))  # written after the shared read
        elif stale:
            self._touch(embedder_id, stale)
        return found

    def _touch(self, embedder_id: str, hashes: list[str]) -> None:
        """Record vectors as in use; a store that cannot be written loses only that record
        (a prune may then drop them, and they are embedded again when next needed)."""
        from tooltray.memory.store.embeddings import touch_embeddings

        try:
            self._write(
                "record cached vectors in use",
                lambda conn: touch_embeddings(conn, embedder_id, hashes),
            )
        except StoreError as exc:
            log.info("tooltray: %d cached vectors not recorded as in use: %s", len(hashes), exc)

    def put_embeddings(self, embedder_id: str, vectors: Mapping[str, NDArray[Any]]) -> None:
        """Cache ``vectors`` (hash -> 1-D vector) as float32; already cached hashes are kept."""
        from tooltray.memory.store.embeddings import write_embeddings

        if vectors:
            self._write(
                "cache embeddings", lambda conn: write_embeddings(conn, embedder_id, vectors)
            )

    def put_result(self, handle: str, session_id: str, turn: int, tool: str, content: str) -> None:
        """Keep the full text of a tool result under ``handle`` (putting it again replaces it)."""
        values = {
            "handle": handle,
            "session_id": session_id,
            "turn": turn,
            "tool": tool,
            "content": content,
            "chars": len(content),
            "created_at": utcnow(),
        }

        def write(conn: Connection) -> None:
            stmt = upsert(conn, RESULTS).values(**values)
            keep = {k: stmt.excluded[k] for k in values if k != "handle"}
            conn.execute(stmt.on_conflict_do_update(index_elements=["handle"], set_=keep))

        self._write(f"store result {handle!r}", write)

    def get_result(self, handle: str) -> str | None:
        """The full text stored under ``handle``, or ``None``."""
        query = select(RESULTS.c.content).where(RESULTS.c.handle == handle)
        return self._read(f"read result {handle!r}", lambda conn: conn.execute(query).scalar())

    def learned_mates(
        self, tools: Sequence[str], min_share: float
    ) -> tuple[list[LearnedMate], LearnClock]:
        """Learned co-use mates of ``tools`` and the clock they are read at, in one read."""
        from tooltray.memory.store.tables import read_clock, read_mates

        def read(conn: Connection) -> tuple[list[LearnedMate], LearnClock]:
            return read_mates(conn, list(tools), min_share), read_clock(conn)

        return self._read("read learned companions", read)

    def past_requests(self, after: int) -> tuple[LearnClock, list[PastRequest]]:
        """The clock and the learned turns with a vector after ``after`` (none if none newer)."""
        from tooltray.memory.store.tables import read_requests

        return self._read("read past requests", partial(read_requests, after=after))

    def past_searches(self, after: int) -> tuple[LearnClock, list[PastRequest]]:
        """The searches' clock and the learned searches after ``after`` (none if none newer)."""
        from tooltray.memory.store.tables import read_searches

        return self._read("read past searches", partial(read_searches, after=after))

    def prune(self, before: datetime) -> PruneReport:
        """Drop ``history`` and ``turns`` rows written before ``before`` in one transaction."""

        def write(conn: Connection) -> PruneReport:
            history = conn.execute(delete(HISTORY).where(HISTORY.c.at < before)).rowcount
            turns = conn.execute(delete(TURNS).where(TURNS.c.at < before)).rowcount
            return PruneReport(int(history), int(turns))

        return self._write("prune old history", write)

    def close(self) -> None:
        """Release every pooled connection (the store can be reopened with a new instance)."""
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
