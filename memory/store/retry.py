"""Bounded retries for the errors that concurrency causes, and one clear error for the rest.

SQLite answers "database is locked" when another process holds the write lock past the busy
timeout; PostgreSQL aborts one side of a serialization failure or deadlock. Both are worth
retrying with exponential backoff and jitter; anything else, damaged stored values included
(undecodable text, broken JSON), becomes a :class:`StoreError` at once.

A busy database must never hold the agent's turn: :class:`Patience` gives each call a time budget
(``store_wait``, 1 s by default) that bounds SQLite's busy wait and the retries together, and once
a call has used its whole budget, later calls try once without waiting until one gets through. So a
turn waits out at most one budget; the trinket queues what could not be written and writes it on
the first commit that reaches the database again.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from tooltray.memory.store.access import readonly_hint
from tooltray.memory.store.probe import first_line
from tooltray.tools.errors import StoreError

T = TypeVar("T")

ATTEMPTS = 8
BASE_DELAY = 0.005
MAX_DELAY = 0.5
_SQLITE_BUSY = ("database is locked", "database table is locked", "database is busy")
_PG_RETRY_STATES = {"40001", "40P01", "55P03"}


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
    fn: Callable[[], T], *, what: str, attempts: int = ATTEMPTS, deadline: float | None = None
) -> T:
    """Run ``fn`` (one whole transaction), retrying transient failures up to ``attempts`` times
    and, with a ``deadline`` (a :func:`time.monotonic` time), not after it.

    Raises:
        StoreError: the database kept refusing, or failed in a way a retry cannot fix.
    """
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except SQLAlchemyError as exc:
            if not is_transient(exc):
                raise StoreError(f"could not {what}: {readonly_hint(first_line(exc))}") from exc
            left = float("inf") if deadline is None else deadline - time.monotonic()
            if attempt == attempts or left <= 0:
                raise busy(what, attempt, exc) from exc
            time.sleep(min(backoff(attempt), left))
        except (UnicodeError, ValueError) as exc:
            raise StoreError(
                f"could not {what}: a stored value is damaged ({type(exc).__name__}: "
                f"{str(exc)[:120]}); move the database aside or restore a backup"
            ) from exc
    raise AssertionError("unreachable")  # pragma: no cover


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

    def run(self, fn: Callable[[float], T], *, what: str) -> T:
        """Run ``fn(wait)`` with retries inside the budget; ``wait`` is what one attempt may
        block for (SQLite's busy timeout). A known-busy database gets one attempt, no wait."""
        budget = 0.0 if self.busy else self.seconds
        deadline = time.monotonic() + budget
        attempts = 1 if self.busy else ATTEMPTS
        try:
            out = with_retries(
                lambda: fn(max(0.0, deadline - time.monotonic())),
                what=what,
                attempts=attempts,
                deadline=deadline,
            )
        except StoreError as exc:
            self.busy = is_transient(exc.__cause__ or exc)
            raise
        self.busy = False
        return out
