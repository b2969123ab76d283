"""Drive a real agent session through the trinket, as a subprocess the reliability tests control.

Usage::

    worker.py script --db URL --job SESSION:SEED --turns T [--start S] [--reference]
    worker.py load --db URL --job KIND:SESSION:N [--job ...] --workers W --turns T

``script`` runs one session's script (crash tests); ``load`` runs jobs quietly in order
(concurrency tests): ``script:SESSION:SEED``, ``shared:SESSION:WORKER`` or ``open:SESSION:0``.

Every write the store commits prints ``ack N`` (flushed) so a parent that kills this process
with SIGKILL knows what was acknowledged; ``--reference`` also prints the canonical state after
every write. ``--start S`` resumes a killed session at step ``S`` the way an agent restarts: one
``prepare`` (rehydrate, no boundary), then the remaining steps. The last line is ``stats {json}``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reliability_support as rs  # noqa: E402

import tooltray.memory.store.store as retry  # noqa: E402
from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed  # noqa: E402
from tooltray.memory.config import Settings  # noqa: E402
from tooltray.memory.core.trinket import ToolLoaderTrinket  # noqa: E402
from tooltray.memory.store import Store  # noqa: E402
from tooltray.tools.demo import demo_registry  # noqa: E402


class Stats:
    """What the parent needs to judge a run: writes, retries and anything that reached us."""

    def __init__(self) -> None:
        self.writes = 0
        self.retries = 0
        self.errors: list[str] = []
        self.meta_errors: list[str] = []
        self.steps = 0
        self.started = time.monotonic()

    def count_write(self, applied: bool) -> None:
        self.writes += 1


class AckStore(Store):
    """The real store, announcing each committed write on stdout."""

    on_write: Callable[[bool], None] = staticmethod(lambda applied: None)  # type: ignore[assignment]

    def apply(self, session_id: str, changes: Any) -> Any:
        snap = super().apply(session_id, changes)
        self.on_write(True)
        return snap

    def put_result(self, *args: Any, **kwargs: Any) -> None:
        super().put_result(*args, **kwargs)
        self.on_write(False)

    def put_embeddings(self, *args: Any, **kwargs: Any) -> None:
        super().put_embeddings(*args, **kwargs)
        self.on_write(False)


class _Errors(logging.Handler):
    def __init__(self, stats: Stats) -> None:
        super().__init__(logging.ERROR)
        self.stats = stats

    def emit(self, record: logging.LogRecord) -> None:
        self.stats.errors.append(record.getMessage()[:300])


def out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class Runner:
    """Runs script steps for one session against one trinket."""

    def __init__(self, trinket: ToolLoaderTrinket, session: str, stats: Stats) -> None:
        self.trinket, self.session, self.stats = trinket, session, stats
        self.users = rs.user_texts()

    def step(self, step: rs.Step) -> None:
        op, sid = step["op"], self.session
        if op == "prepare":
            self.trinket.prepare(sid, rs.messages(self.users, step["turn"]))
        elif op == "meta":
            reply = self.trinket.handle_meta(sid, step["name"], step["args"])
            if "locked" in reply or "could not" in reply:
                self.stats.meta_errors.append(reply[:200])
        elif op == "used":
            emit(tool_used, sid, ToolUsed(tool=step["tool"], turn=step["turn"]))
        elif op == "completed":
            emit(turn_completed, sid, TurnCompleted(turn=step["turn"]))
        elif op == "compact":
            self.trinket.compact(sid, step["turn"])
        elif op == "shorten":
            self.trinket.shorten(sid, step["tool"], step["text"])
        else:  # pragma: no cover - scripts are generated here
            raise ValueError(f"unknown step {op!r}")
        self.stats.steps += 1

    def rehydrate(self, step: rs.Step) -> None:
        """What a restarted agent does first: prepare the turn it was in."""
        self.trinket.prepare(self.session, rs.messages(self.users, step["turn"]))


def build(args: argparse.Namespace, stats: Stats) -> tuple[ToolLoaderTrinket, AckStore]:
    settings = Settings(db=args.db, **json.loads(args.settings))
    store = AckStore(args.db, wait=settings.store_wait)
    return ToolLoaderTrinket(demo_registry(), store, settings=settings), store


class Recorder:
    """Prints what the parent needs: ``ack N`` per write; with ``--reference`` also ``ref`` (the
    state after the write) and ``carry`` (steps whose tool-used records that write stored)."""

    def __init__(
        self, args: argparse.Namespace, stats: Stats, trinket: ToolLoaderTrinket, session: str
    ) -> None:
        self.args, self.stats, self.trinket, self.session = args, stats, trinket, session
        self.step = -1
        self.waiting: list[int] = []

    def ack(self, applied: bool) -> None:
        self.stats.writes += 1
        if self.args.quiet:
            return
        out(f"ack {self.stats.writes}")
        if not self.args.reference:
            return
        store = self.trinket.store
        assert store is not None
        state = rs.session_state(store, self.session)
        out(f"ref {self.step} {rs.digest(state)} {rs.digest(state, core=True)}")
        if applied and self.waiting:
            out(f"carry {self.stats.writes} {' '.join(map(str, self.waiting))}")
            self.waiting.clear()

    def stepped(self, index: int) -> None:
        """Nothing waits for a later write: a tool-used is stored when it is received, so
        every step is in the reference of the write that acknowledges it."""


def run_script(args: argparse.Namespace, stats: Stats) -> None:
    """One session's script from ``--start``, announcing every write and step."""
    trinket, store = build(args, stats)
    registry = trinket.registry
    names = [s.name for s in registry.allowed()]
    session, seed = args.job[0].split(":")
    steps = rs.build_script(int(seed), args.turns, names, [b.name for b in registry.bundles()])
    runner, recorder = Runner(trinket, session, stats), Recorder(args, stats, trinket, session)
    store.on_write = recorder.ack  # type: ignore[method-assign]
    start = args.start
    if 0 < start < len(steps):
        if steps[start]["op"] != "prepare":
            runner.rehydrate(steps[start])
        else:
            recorder.step = start
            runner.step(steps[start])
            start += 1
        state = rs.session_state(store, session)
        out(f"rehydrated {start} {rs.digest(state)} {rs.digest(state, core=True)}")
    for index in range(start, len(steps)):
        recorder.step = index
        out(f"step {index}")
        runner.step(steps[index])
        recorder.stepped(index)
        out(f"stepdone {index}")
    finish(trinket, session, stats)
    trinket.close()


def run_load(args: argparse.Namespace, stats: Stats) -> None:
    """Jobs ``script:SESSION:SEED`` (own session) or ``shared:SESSION:WORKER``, quietly, in order.

    ``shared`` jobs run with ``growth = never`` so the shared session's end state does not depend
    on how workers interleave; ``open:SESSION:0`` only starts a session (first selection).
    """
    given = json.loads(args.settings)
    for job in args.job:
        kind, session, number = job.split(":")
        overrides = {"growth": "never"} if kind == "shared" else {}
        args.settings = json.dumps(given | overrides)
        trinket, store = build(args, stats)
        registry = trinket.registry
        names = [s.name for s in registry.allowed()]
        if kind == "script":
            bundles = [b.name for b in registry.bundles()]
            steps = rs.build_script(int(number), args.turns, names, bundles)
        elif kind == "shared":
            steps = rs.shared_script(int(number), args.workers, args.turns, names)
        else:
            steps = [{"op": "prepare", "turn": 1}]

        store.on_write = stats.count_write  # type: ignore[method-assign]
        runner = Runner(trinket, session, stats)
        for step in steps:
            runner.step(step)
        finish(trinket, session, stats)
        trinket.close()
        store.close()


def finish(trinket: ToolLoaderTrinket, session: str, stats: Stats) -> None:
    state = trinket.state(session)
    if state.pending:
        stats.errors.append(f"{len(state.pending)} changes still pending for {session}")
    if state.health == "degraded":
        stats.errors.append(f"session {session} ended degraded")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["script", "load"])
    parser.add_argument("--db", required=True)
    parser.add_argument("--job", action="append", required=True)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--reference", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--settings", default="{}")
    return parser.parse_args(argv)


def execute(args: argparse.Namespace) -> dict[str, Any]:
    """Run the jobs; the report counts writes, retries and anything that reached the agent."""
    stats = Stats()
    handler = _Errors(stats)
    logging.getLogger("tooltray").addHandler(handler)
    original = retry.backoff

    def counting(attempt: int) -> float:
        stats.retries += 1
        return float(original(attempt))

    retry.backoff = counting
    try:
        (run_script if args.mode == "script" else run_load)(args, stats)
    finally:
        retry.backoff = original
        logging.getLogger("tooltray").removeHandler(handler)
    return {
        "writes": stats.writes,
        "retries": stats.retries,
        "errors": stats.errors[:20],
        "error_count": len(stats.errors),
        "meta_errors": stats.meta_errors[:5],
        "steps": stats.steps,
        "elapsed": round(time.monotonic() - stats.started, 3),
    }


def main(argv: list[str] | None = None) -> None:
    out("stats " + json.dumps(execute(parse_args(argv))))


if __name__ == "__main__":
    main()
