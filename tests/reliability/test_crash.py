"""Crash safety: SIGKILL an agent session at random points, restart it, lose and duplicate nothing.

A reference run records the canonical state after every write. Each trial runs the same session
in a subprocess and kills it (at a random acknowledged write plus jitter, or at a random moment
since launch, start-up included), then checks three things:

1. the database holds exactly the reference state after some prefix of the writes, inside the
   window the worker had acknowledged (nothing acknowledged lost, no half transaction, no row
   written twice);
2. a restarted process (one ``prepare``, as an agent does) sees the same loaded set and history;
3. after one to three kills, finishing the session gives exactly the reference's final state.
"""

from __future__ import annotations

import random
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import reliability_support as rs

from tooltray.memory.store import Store
from tooltray.tools.demo import demo_registry

SESSION = "crash"
SEED = 7
NO_LEARNING = '{"learn": "off"}'
"""For PostgreSQL: its sequences do not roll back, so a killed transaction leaves a gap in the
``learn_requests`` ids, which are the learned clock; a restarted run's past-request votes, and
the growth scores stored with them, then differ from the reference's in the third decimal.
SQLite reuses a rolled-back id, so its run keeps learning on and checks it survives kills too."""


@dataclass
class Reference:
    """The reference run: state digests after every write, and where each step's writes end."""

    steps: list[rs.Step]
    full: list[str]
    core: list[str]
    ends: list[int]
    carried: dict[int, int]
    duration: float
    running: float

    def end(self, step: int) -> int:
        """Writes done once ``step`` has finished (0 before the first step)."""
        return 0 if step < 0 else self.ends[min(step, len(self.ends) - 1)]

    def durable_at(self, step: int) -> int:
        """Writes after which ``step`` is stored: its own, or the commit that carried it.

        Tool-used records are kept in memory and stored with the session's next commit, so a
        step that only reported a tool use is durable when that later commit is.
        """
        return self.carried.get(step, self.end(step))

    def resume_step(self, writes: int) -> int:
        """The first step not yet durable after ``writes`` writes (an agent replays from it)."""
        for index in range(len(self.steps)):
            if self.durable_at(index) > writes:
                return index
        return len(self.steps)


@dataclass
class Tally:
    """Figures of a crash experiment."""

    trials: int = 0
    kills: int = 0
    kills_at_write: int = 0
    kills_at_time: int = 0
    kills_before_first_write: int = 0
    restarts: int = 0
    restart_checks: int = 0
    exact_prefix_matches: int = 0
    writes_in_reference: int = 0
    problems: list[str] = field(default_factory=list)

    def figures(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "problems"}
        out["lost_or_duplicated"] = len(self.problems)
        return out


def script_steps(turns: int) -> list[rs.Step]:
    registry = demo_registry()
    names = [s.name for s in registry.allowed()]
    return rs.build_script(SEED, turns, names, [b.name for b in registry.bundles()])


def state_now(url: str) -> dict[str, Any]:
    with Store(url) as store:
        return rs.session_state(store, SESSION)


def run_reference(spawn: Any, url: str, turns: int, settings: str = "{}") -> Reference:
    empty = state_now(url)
    began = time.monotonic()
    job = ["script", "--db", url, "--job", f"{SESSION}:{SEED}", "--turns", str(turns)]
    proc = spawn(*job, "--settings", settings, "--reference")
    first_step = None
    while (line := proc.next_line(timeout=120)) is not None:
        if first_step is None and line.startswith("step"):
            first_step = time.monotonic()
    lines = proc.drain()
    duration = time.monotonic() - began
    running = duration - ((first_step or began) - began)
    assert proc.stats()["error_count"] == 0, proc.stats()
    steps = script_steps(turns)
    full, core, owner = [rs.digest(empty)], [rs.digest(empty, core=True)], []
    carried: dict[int, int] = {}
    for line in lines:
        if line.startswith("ref "):
            _, step, f, c = line.split()
            owner.append(int(step))
            full.append(f)
            core.append(c)
        elif line.startswith("carry "):
            write, *carried_steps = map(int, line.split()[1:])
            carried.update({s: write for s in carried_steps})
    ends = [sum(1 for o in owner if o <= i) for i in range(len(steps))]
    assert full[-1] == rs.digest(state_now(url))
    return Reference(steps, full, core, ends, carried, duration, running)


def kill_somewhere(proc: Any, rng: random.Random, ref: Reference, tally: Tally) -> bool:
    """Kill ``proc`` at a random write (plus jitter) or a random moment; True if it died so."""
    roll = rng.random()
    if roll < 0.5:
        target, acks = rng.randint(1, max(1, len(ref.full) - 1)), 0
        while acks < target:
            line = proc.next_line(timeout=60)
            if line is None:
                break
            acks += line.startswith("ack ")
        time.sleep(rng.uniform(0, 0.004))
        kind = "kills_at_write"
    else:
        began = proc.started
        if roll < 0.8:  # a random moment once the session runs; else from launch (start-up)
            while (line := proc.next_line(timeout=60)) is not None and not line.startswith("step"):
                pass
            began = time.monotonic()
        deadline = began + rng.uniform(0, ref.running if roll < 0.8 else ref.duration)
        time.sleep(max(0.0, deadline - time.monotonic()))
        kind = "kills_at_time"
    proc.popen.send_signal(signal.SIGKILL)
    proc.drain()
    killed = proc.popen.returncode == -signal.SIGKILL
    if killed:
        tally.kills += 1
        setattr(tally, kind, getattr(tally, kind) + 1)
    return killed


def _last(lines: list[str], prefix: str) -> int | None:
    found = [int(line.split()[1]) for line in lines if line.startswith(prefix + " ")]
    return max(found) if found else None


def check_restart(
    lines: list[str], start: int, ref: Reference, tally: Tally, before: str | None
) -> None:
    """A restarted process's first ``prepare`` may not change what is stored.

    When the step to resume is itself a ``prepare`` it runs as that step, so the state must be
    the reference's after it; otherwise the state must be exactly what the crash left.
    """
    rehydrated = [line.split() for line in lines if line.startswith("rehydrated ")]
    if not rehydrated or before is None:
        return
    _, _, _, core = rehydrated[0]
    tally.restart_checks += 1
    runs_step = ref.steps[start]["op"] == "prepare"
    expected = ref.core[ref.end(start)] if runs_step else before
    if core != expected:
        tally.problems.append(
            f"restart at step {start} ({ref.steps[start]}) changed the stored state: "
            "the restarted prepare added or removed something"
        )


def check_after_kill(
    lines: list[str], start: int, url: str, ref: Reference, tally: Tally, floor: int
) -> tuple[int, str, int] | None:
    """Check the killed process left a reference prefix; return (resume step, stored core, the
    reference write it matched).

    ``floor`` is the write the database stood at when this process started (0 for the first):
    writes cannot be undone, and a process killed before its first step leaves it there, which
    can be past ``ref.end(start - 1)`` when a step's writes are stored with a later commit.
    """
    rehydrated = [line.split() for line in lines if line.startswith("rehydrated ")]
    done = _last(lines, "stepdone")
    last_done = (
        done if done is not None else (int(rehydrated[0][1]) - 1 if rehydrated else start - 1)
    )
    in_flight = _last(lines, "step")
    if in_flight is None:
        in_flight = start if start < len(ref.steps) and ref.steps[start]["op"] == "prepare" else -1
    low, high = ref.end(last_done), max(ref.end(max(last_done, in_flight)), floor)
    state = state_now(url)
    core, full = rs.digest(state, core=True), rs.digest(state)
    matches = [j for j in range(low, high + 1) if ref.core[j] == core]
    if not matches:
        tally.problems.append(
            f"after a kill at step {in_flight} (resumed at {start}) the database matches no "
            f"reference state between writes {low} and {high}: lost or duplicated rows"
        )
        return None
    if floor == 0 and start == 0:
        acks = sum(1 for line in lines if line.startswith("ack "))
        if full not in ref.full[acks : acks + 2]:
            tally.problems.append(
                f"{acks} acknowledged writes, but the state is not write {acks} "
                f"(core matches writes {matches}; {full} vs {ref.full[acks : acks + 2]}; {state})"
            )
        else:
            tally.exact_prefix_matches += 1
    tally.kills_before_first_write += min(matches) == 0
    return ref.resume_step(min(matches)), core, min(matches)


def crash_trial(
    spawn: Any,
    url: str,
    ref: Reference,
    rng: random.Random,
    tally: Tally,
    settings: str = "{}",
) -> None:
    turns = str(max(s.get("turn", 0) for s in ref.steps))
    job = ["script", "--db", url, "--job", f"{SESSION}:{SEED}", "--turns", turns]
    job += ["--settings", settings]
    start, before, floor = 0, None, 0
    for _ in range(rng.randint(1, 3)):
        if start >= len(ref.steps):
            break
        proc = spawn(*job, "--start", str(start))
        tally.restarts += start > 0
        killed = kill_somewhere(proc, rng, ref, tally)
        check_restart(proc.seen, start, ref, tally, before)
        if not killed:
            if proc.stats()["error_count"]:
                tally.problems.append(f"worker errors: {proc.stats()['errors']}")
            start = len(ref.steps)
            break
        found = check_after_kill(proc.seen, start, url, ref, tally, floor)
        if found is None:
            return
        start, before, floor = found
    if start < len(ref.steps):
        proc = spawn(*job, "--start", str(start))
        tally.restarts += start > 0
        proc.drain()
        check_restart(proc.seen, start, ref, tally, before)
        stats = proc.stats()
        if stats["error_count"]:
            tally.problems.append(f"worker errors: {stats['errors']}")
    if rs.digest(state_now(url)) != ref.full[-1]:
        tally.problems.append("the finished session differs from the uninterrupted reference")
    tally.trials += 1


def run_experiment(
    spawn: Any, fresh: Any, trials: int, turns: int, seed: int, settings: str = "{}"
) -> Tally:
    ref = run_reference(spawn, fresh(), turns, settings)
    tally = Tally(writes_in_reference=len(ref.full) - 1)
    rng = random.Random(seed)
    for _ in range(trials):
        crash_trial(spawn, fresh(), ref, rng, tally, settings)
    return tally


def test_sigkill_at_random_points_loses_and_duplicates_nothing_sqlite(
    spawn: Any, template_db: Path, tmp_path: Path, sizes: Any, figures: dict[str, Any]
) -> None:
    made = iter(range(10_000))

    def fresh() -> str:
        path = tmp_path / f"crash{next(made)}.db"
        shutil.copy(template_db, path)
        return f"sqlite:///{path}"

    tally = run_experiment(spawn, fresh, sizes.kill_trials, sizes.crash_turns, 1234)
    figures["crash_sqlite"] = tally.figures()
    assert not tally.problems, tally.problems
    assert tally.kills >= sizes.kill_trials * 0.8


@pytest.mark.postgres
def test_sigkill_at_random_points_loses_and_duplicates_nothing_postgres(
    spawn: Any, vectors: rs.Vectors, sizes: Any, figures: dict[str, Any]
) -> None:
    with rs.pg_databases(vectors) as fresh:
        tally = run_experiment(
            spawn, fresh, sizes.pg_kill_trials, sizes.crash_turns, 4321, NO_LEARNING
        )
    figures["crash_postgres"] = tally.figures()
    assert not tally.problems, tally.problems
    assert tally.kills >= 1


def test_a_restart_mid_turn_does_not_bring_back_an_unloaded_tool(seeded_sqlite: str) -> None:
    """A restarted process rehydrates with ``prepare``; it must not redo the turn's growth and
    re-add a tool the model unloaded earlier in that turn (the loaded set must stay the same)."""
    from tooltray.memory.config import Settings
    from tooltray.memory.core.trinket import ToolLoaderTrinket

    trip = "Find me flights from Boston to Lisbon on Nov 10 and a hotel there."
    code = "The parse_range test is failing: read src/dates.py and fix the off-by-one bug."
    turn2 = [
        {"role": "user", "content": trip},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": code},
    ]
    settings = Settings(db=seeded_sqlite, max_tools=40)
    first = ToolLoaderTrinket(demo_registry(), Store(seeded_sqlite), settings=settings)
    first.prepare("g", turn2[:1])
    before = first.loaded("g")
    first.prepare("g", turn2)
    grown = [n for n in first.loaded("g") if n not in before]
    assert grown, "the second message should grow the set"
    first.handle_meta("g", "unload_tools", {"tools": grown[:1]})
    kept = first.loaded("g")
    first.close()
    second = ToolLoaderTrinket(demo_registry(), Store(seeded_sqlite), settings=settings)
    try:
        second.prepare("g", turn2)
        assert second.loaded("g") == kept, f"the restart re-added {grown[0]}"
    finally:
        second.close()
