"""Bounds on one ``tooltray sql`` statement: time, rows, output size, and Ctrl-C.

Ad-hoc SQL is the one place a user hands tooltray a computation of any size (a recursive CTE
without an end, ``SELECT randomblob(100000000)``), so each statement stops at the first bound it
reaches, with one line naming the bound and the flag that raises it:

* time (``--timeout``): SQLite checks a deadline in a progress handler every
  :data:`PROGRESS_STEPS` virtual-machine steps; PostgreSQL gets ``statement_timeout`` and the
  client checks the deadline between fetches;
* rows (``--limit``): rows are fetched in batches up to the limit plus one, never all of them
  (a server-side cursor on PostgreSQL), and the extra row only says that more exist;
* output (``--max-bytes``): the fetched values' sizes are summed as they arrive; SQLite also
  gets ``SQLITE_LIMIT_LENGTH``, so a single huge value fails before it is built;
* Ctrl-C: SQLite's statement is interrupted (``sqlite3_interrupt``) at once; a PostgreSQL
  statement runs in a worker thread while the main thread waits in Python, where Ctrl-C
  arrives at once, and cancels it on the server (:func:`cancellable`);
* the console's own SQL functions (REGEXP): SQLite's progress handler and interrupt do not
  reach inside a Python function, so a backtracking pattern ran past both. Each function is
  wrapped by :func:`bounded`, and a timer at the deadline (``SIGALRM``) or Ctrl-C raises out of
  it while it runs: the stdlib ``re`` checks for signals as it backtracks.
"""

from __future__ import annotations

import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tooltray.tools.errors import StoreError

DEFAULT_ROWS = 1000
DEFAULT_SECONDS = 30.0
DEFAULT_MAX_BYTES = 10_000_000
PROGRESS_STEPS = 10_000  # SQLite VM steps between deadline checks: well under 1 ms each
BATCH = 200
T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    """The bounds of one statement (see the module's docstring)."""

    rows: int = DEFAULT_ROWS
    seconds: float = DEFAULT_SECONDS
    max_bytes: int = DEFAULT_MAX_BYTES


@dataclass
class Stop:
    """Why a running statement was stopped (``None``: it was not), and its deadline."""

    deadline: float
    reason: str | None = None
    limits: Limits = field(default_factory=Limits)
    in_function: bool = False

    def expired(self) -> bool:
        if self.reason is None and time.monotonic() > self.deadline:
            self.reason = "time"
        return self.reason is not None

    def error(self) -> StoreError:
        """The one line for the reason the statement stopped."""
        if self.reason == "interrupt":
            return StoreError("query stopped: interrupted (Ctrl-C); nothing was changed")
        if self.reason == "bytes":
            return too_big(self.limits)
        return StoreError(
            f"query stopped: it ran longer than {self.limits.seconds:g} s (--timeout): narrow "
            "it (a WHERE, a LIMIT, an end to a recursive CTE) or pass a larger --timeout"
        )


def too_big(limits: Limits) -> StoreError:
    """The refusal of an output larger than ``limits.max_bytes``."""
    return StoreError(
        f"query stopped: its output passed {limits.max_bytes:,} bytes (--max-bytes): select "
        "fewer or shorter values (substr(), length(), LIMIT) or pass a larger --max-bytes"
    )


def value_size(value: Any) -> int:
    """About how many bytes ``value`` takes when printed."""
    if value is None:
        return 0
    if isinstance(value, (bytes, bytearray, memoryview)):
        return 2 * len(bytes(value))  # printed as hex
    return len(value) if isinstance(value, str) else len(str(value))


def fetch(cursor: Any, stop: Stop) -> tuple[list[tuple[Any, ...]], bool]:
    """Up to ``rows`` rows of ``cursor`` (and whether more exist) within the bounds of ``stop``.

    Raises:
        StoreError: the output passed ``max_bytes`` or the deadline passed.
    """
    limits, size = stop.limits, 0
    rows: list[tuple[Any, ...]] = []
    while len(rows) <= limits.rows:
        batch = cursor.fetchmany(min(BATCH, limits.rows + 1 - len(rows)))
        for row in batch:
            size += sum(value_size(v) for v in row)
            if size > limits.max_bytes:
                stop.reason = "bytes"
                raise stop.error()
        rows += [tuple(r) for r in batch]
        if not batch or stop.expired():
            break
    if stop.expired():
        raise stop.error()
    return rows[: limits.rows], len(rows) > limits.rows


_RUNNING: ContextVar[Stop | None] = ContextVar("tooltray_sql_stop", default=None)


class Halted(Exception):
    """Raised out of a console SQL function when its statement passed a bound."""


def bounded(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` as a SQL function that the running statement's deadline and Ctrl-C stop."""

    def call(*args: Any) -> T:
        stop = _RUNNING.get()
        if stop is None:
            return fn(*args)
        if stop.reason is not None:
            raise Halted(stop.reason)
        stop.in_function = True
        try:
            return fn(*args)
        finally:
            stop.in_function = False

    return call


@contextmanager
def sqlite_bounds(connection: sqlite3.Connection, limits: Limits) -> Iterator[Stop]:
    """Bound statements on ``connection``: deadline, value size, Ctrl-C (see the module)."""
    stop = Stop(time.monotonic() + limits.seconds, limits=limits)
    if sys.version_info >= (3, 11):  # 3.10 has no setlimit; the byte count still applies
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max(limits.max_bytes, 1000))
    connection.set_progress_handler(lambda: int(stop.expired()), PROGRESS_STEPS)
    token = _RUNNING.set(stop)
    try:
        with _on_signals(stop, connection.interrupt):
            yield stop
    finally:
        _RUNNING.reset(token)
        connection.set_progress_handler(None, PROGRESS_STEPS)


@contextmanager
def _on_signals(stop: Stop, interrupt: Any) -> Iterator[None]:
    """While inside, Ctrl-C and the deadline's timer stop the statement, a SQL function too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def halt(reason: str) -> Callable[[int, Any], None]:
        def handler(signum: int, frame: Any) -> None:
            stop.reason = stop.reason or reason
            interrupt()
            if stop.in_function:
                raise Halted(stop.reason)

        return handler

    previous = signal.signal(signal.SIGINT, halt("interrupt"))
    alarm = signal.signal(signal.SIGALRM, halt("time"))
    signal.setitimer(signal.ITIMER_REAL, max(stop.deadline - time.monotonic(), 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, alarm)
        signal.signal(signal.SIGINT, previous)


def sqlite_failure(exc: BaseException, stop: Stop) -> StoreError | None:
    """The line for a SQLite error a bound caused (``None``: the statement's own error)."""
    if stop.reason is not None:
        return stop.error()
    if "too big" in str(exc).lower():  # SQLITE_TOOBIG: a value passed SQLITE_LIMIT_LENGTH
        return too_big(stop.limits)
    return None


def cancellable(run: Callable[[], T], cancel: Callable[[], object], stop: Stop) -> T:
    """``run()`` in a worker thread; each Ctrl-C in the main thread calls ``cancel``.

    psycopg waits for the server in C, where Python's Ctrl-C handler does not run until the
    statement ends; the main thread, waiting here in Python, gets it at once. Its handler only
    counts presses: a KeyboardInterrupt raised inside ``Event.wait`` can leave the event's lock
    held, and the worker's ``set()`` then waits forever (a hang seen under load).
    """
    if threading.current_thread() is not threading.main_thread():
        return run()
    box: dict[str, Any] = {}
    done, presses = threading.Event(), [0]

    def work() -> None:
        try:
            box["value"] = run()
        except BaseException as exc:  # handed to the caller's thread below
            box["error"] = exc
        finally:
            done.set()

    def pressed(signum: int, frame: Any) -> None:
        presses[0] += 1

    previous = signal.signal(signal.SIGINT, pressed)
    try:
        threading.Thread(target=work, name="tooltray-sql", daemon=True).start()
        _wait_cancelling(done, presses, cancel, stop)
    finally:
        signal.signal(signal.SIGINT, previous)
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def _wait_cancelling(
    done: threading.Event, presses: list[int], cancel: Callable[[], object], stop: Stop
) -> None:
    """Wait for the worker; cancel its statement once per Ctrl-C pressed meanwhile."""
    handled = 0
    while not done.wait(0.05):
        if presses[0] > handled:
            handled = presses[0]
            stop.reason = stop.reason or "interrupt"
            cancel()
