"""Suite ``bounds``: the seconds behind the bounds the tests check by counting, not by clock.

``python bench/run.py bounds [--quick]``. The tests assert what bounds the time (a pattern
check's budget refuses the value, a long name is split a bounded number of times, a locked
store's calls wait only inside ``store_wait``); a wall-clock assertion failed on a loaded
machine, so the times live here: the median of ``RUNS`` runs of each case (``--quick``: 1).

* ``hostile pattern``: one ``schema_problems`` call whose argument a catastrophic pattern
  (``(a|aa)+$``) cannot check within ``PATTERN_SECONDS``;
* ``hostile pattern, starved``: the same, with this process and three busy ones sharing one
  core (the budget is wall time: ``regex``'s own timeout counts CPU time, and 0.5 CPU seconds
  took 2-8 s here before the match moved to a thread waited on until the deadline);
* ``name of prefixes``: resolving a 100,000-character ``a__a__...`` tool name;
* ``locked store``: ``prepare``, ``handle_meta`` and ``turn-completed`` while another process
  holds the SQLite write lock, with ``store_wait`` of 0.5 s.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RUNS = 5
WAIT = 0.5
TRIP = [{"role": "user", "content": "Find me flights from Boston to Lisbon and a hotel there."}]
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


def seconds(fn: Callable[[], Any]) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def hostile_pattern() -> float:
    """One call against ``(a|aa)+$`` with a value it backtracks on for ever."""
    from tooltray.memory.agent.calls import schema_problems
    from tooltray.tools.importers.openai import from_openai

    schema = {"type": "object", "properties": {"p": {"type": "string", "pattern": "(a|aa)+$"}}}
    spec = from_openai({"name": "t", "description": "d", "parameters": schema})
    return seconds(lambda: schema_problems(spec, {"p": "a" * 64 + "!"}))


BUSY = 3


def starved(fn: Callable[[], float]) -> float:
    """``fn()`` with this process pinned to one core that :data:`BUSY` spinning processes share."""
    import os

    before = os.sched_getaffinity(0)
    core = {min(before)}
    spin = [sys.executable, "-c", "while True: pass"]
    hogs = [subprocess.Popen(spin) for _ in range(BUSY)]
    try:
        for hog in hogs:
            os.sched_setaffinity(hog.pid, core)
        os.sched_setaffinity(0, core)
        return fn()
    finally:
        os.sched_setaffinity(0, before)
        for hog in hogs:
            hog.kill()
            hog.wait()


def name_of_prefixes() -> float:
    """A tool call by a 100,000-character name of ``a__`` parts."""
    from tooltray.memory.agent.calls import CallRunner
    from tooltray.memory.config import Settings
    from tooltray.memory.core.trinket import ToolLoaderTrinket
    from tooltray.memory.store import Store
    from tooltray.tools.demo import demo_registry

    with Store("sqlite://") as store:
        trinket = ToolLoaderTrinket(demo_registry(), store, settings=Settings(db="sqlite://"))
        try:
            runner = CallRunner(trinket, native=True)
            return seconds(lambda: runner.run("prefixes", 1, 0, "a__" * 33_334, "{}"))
        finally:
            trinket.close()


def locked_store(folder: Path) -> dict[str, float]:
    """The three public calls of a new session while another process holds the write lock."""
    from tooltray.events import TurnCompleted, emit, turn_completed
    from tooltray.memory.config import Settings
    from tooltray.memory.core.trinket import ToolLoaderTrinket
    from tooltray.tools.demo import demo_registry

    url = f"sqlite:///{folder / f'locked{time.monotonic_ns()}.db'}"
    settings = Settings(db=url, store_wait=WAIT, activation_share=0.0)
    with ToolLoaderTrinket(demo_registry(), settings=settings) as trinket:
        trinket.prepare("warm", TRIP)
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_LOCK, url.removeprefix("sqlite:///")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdin is not None and holder.stdout is not None
        try:
            holder.stdout.readline()
            load = {"tools": ["git_commit"]}
            return {
                "prepare": seconds(lambda: trinket.prepare("s", TRIP)),
                "handle_meta": seconds(lambda: trinket.handle_meta("s", "load_tools", load)),
                "turn-completed": seconds(
                    lambda: emit(turn_completed, "s", TurnCompleted(message_count=1))
                ),
            }
        finally:
            holder.stdin.write("\n")
            holder.stdin.flush()
            holder.wait(timeout=60)


def run(data_dir: Path, out_dir: Path, quick: bool = False) -> dict[str, Any]:
    """Time every case; print one line each; return the medians."""
    runs = 1 if quick else RUNS
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            times.setdefault("hostile pattern", []).append(hostile_pattern())
            times.setdefault("hostile pattern, starved", []).append(starved(hostile_pattern))
            times.setdefault("name of prefixes", []).append(name_of_prefixes())
            for call, took in locked_store(Path(tmp)).items():
                times.setdefault(f"locked store: {call}", []).append(took)
    medians = {case: round(statistics.median(values), 3) for case, values in times.items()}
    for case, median in medians.items():
        print(f"{case:32} {median:7.3f} s (median of {runs})")
    return {"runs": runs, "store_wait": WAIT, "seconds": medians}


if __name__ == "__main__":
    run(Path("."), Path("."), quick="--quick" in sys.argv)
