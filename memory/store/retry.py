"""Bounded retries for the errors that concurrency causes, and one clear error for the rest.

SQLite answers "database is locked" when another process holds the write lock past the busy
timeout; PostgreSQL aborts one side of a serialization failure or deadlock. Both are worth
retrying with exponential backoff and jitter; anything else, damaged stored values included
(undecodable text, broken JSON), becomes a :class:`StoreError` at once.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
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


def with_retries(fn: Callable[[], T], *, what: str, attempts: int = ATTEMPTS) -> T:
    """Run ``fn`` (one whole transaction), retrying transient failures up to ``attempts`` times.

    Raises:
        StoreError: the database kept refusing, or failed in a way a retry cannot fix.
    """
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except SQLAlchemyError as exc:
            if not is_transient(exc):
                raise StoreError(f"could not {what}: {readonly_hint(first_line(exc))}") from exc
            if attempt == attempts:
                raise StoreError(
                    f"could not {what}: the database stayed busy after {attempts} attempts "
                    f"({first_line(exc)}); another process holds it too long, retry later"
                ) from exc
            time.sleep(backoff(attempt))
        except (UnicodeError, ValueError) as exc:
            raise StoreError(
                f"could not {what}: a stored value is damaged ({type(exc).__name__}: "
                f"{str(exc)[:120]}); move the database aside or restore a backup"
            ) from exc
    raise AssertionError("unreachable")  # pragma: no cover
