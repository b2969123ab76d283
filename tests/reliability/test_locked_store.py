"""A SQLite store another process holds locked never holds the agent's turn.

A real second process takes the write lock (``BEGIN EXCLUSIVE``) and keeps it; ``prepare`` for a
new session, ``handle_meta`` and ``turn-completed`` may each wait for the lock only inside the
``store_wait`` budget (before the budget existed, ``prepare`` waited out 8 retries of a 5 s busy
timeout per write: 163 s), and what they queued must be in the database once the lock is gone.
The test reads the busy timeouts the store gives SQLite, not a clock (the seconds a locked
store costs a turn are measured by ``bench/bounds.py``).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, event

from tooltray.events import TurnCompleted, emit, turn_completed
from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.store import Store
from tooltray.tools.demo import demo_registry

WAIT = 0.5
TRIP = "Find me flights from Boston to Lisbon on Nov 10 and a hotel there."

HOLD_LOCK = textwrap.dedent(
    """
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    sys.stdin.readline()
    conn.execute("ROLLBACK")
    """
)


@pytest.fixture
def trinket(seeded_sqlite: str) -> Iterator[ToolLoaderTrinket]:
    """A trinket that opens the store itself, so ``store_wait`` reaches it from the settings."""
    settings = Settings(db=seeded_sqlite, store_wait=WAIT, activation_share=0.0)
    with ToolLoaderTrinket(demo_registry(), settings=settings) as opened:
        opened.prepare("warm", [{"role": "user", "content": TRIP}])
        yield opened


def write_waits(engine: Engine, fn: Callable[[], Any]) -> list[int]:
    """Run ``fn``; the busy timeout (ms) of every write transaction it began on ``engine``."""
    busy: list[int] = []
    waits: list[int] = []

    def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.startswith("PRAGMA busy_timeout="):
            busy.append(int(statement.split("=", 1)[1]))
        elif statement == "BEGIN IMMEDIATE":
            waits.append(busy[-1])

    event.listen(engine, "before_cursor_execute", seen)
    try:
        fn()
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    return waits


def test_a_locked_store_costs_a_turn_at_most_its_wait_and_loses_nothing(
    trinket: ToolLoaderTrinket, seeded_sqlite: str
) -> None:
    path = seeded_sqlite.removeprefix("sqlite:///")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert trinket.store is not None
        engine = trinket.store.engine
        waits = {
            "prepare": write_waits(
                engine, lambda: trinket.prepare("s", [{"role": "user", "content": TRIP}])
            ),
            "handle_meta": write_waits(
                engine, lambda: trinket.handle_meta("s", "load_tools", {"tools": ["git_commit"]})
            ),
            "turn-completed": write_waits(
                engine, lambda: emit(turn_completed, "s", TurnCompleted(message_count=1))
            ),
        }
        first = waits["prepare"]  # the first write waits out the budget, no more ...
        assert first and first == sorted(first, reverse=True) and first[0] <= WAIT * 1000, waits
        later = waits["handle_meta"] + waits["turn-completed"]  # ... then one try, no wait
        assert later and set(later) == {0}, waits
        assert "git_commit" in trinket.loaded("s") and trinket.state("s").pending
    finally:
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(timeout=30)
    emit(turn_completed, "s", TurnCompleted(message_count=3))
    assert not trinket.state("s").pending
    with Store(seeded_sqlite) as fresh:
        stored = fresh.snapshot("s")
        history = [(e.kind, e.tool) for e in fresh.history("s")]
    assert stored is not None and stored.names() == trinket.loaded("s")
    assert ("started", None) in history and ("loaded", "git_commit") in history
