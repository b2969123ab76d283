"""Suite ``startup``: how long each ``tooltray`` command takes from a cold process to its exit.

``python bench/run.py startup [--quick] [--baseline PKGDIR] [--only LABELS]`` (or
``python bench/startup.py`` with the same flags).

Each command runs ``RUNS`` times in a fresh ``python`` subprocess (the console script's own
code path: ``tooltray.memory.cli.main``), against a small SQLite store with one stored session;
the table shows the median CPU time (user + system) of the child, and its wall time. On a shared
machine the wall time mostly measures the other jobs; the CPU time is what the command costs,
close to its wall time on an idle machine. The goal is at most ``TARGET_S`` of CPU for
``--help``, ``sql``, ``history`` and ``db``: they must not load the agent loop, the embedders or
onnxruntime, nor, on a SQLite store, SQLAlchemy and Alembic (they read the file with the stdlib).

The floors are timed the same way, once per run: a bare interpreter (what no command goes below),
``import click`` (what every command pays for its command line) and ``import sqlalchemy`` alone
(what a store command still pays on PostgreSQL, and what the fast commands no longer pay).

``--baseline PKGDIR`` (or ``TOOLTRAY_STARTUP_BASELINE``) times a second install side by side,
e.g. a tree whose ``tooltray/`` links to an older checkout, so before/after share one machine
state (start-up times move with the machine's load).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

RUNS = 5
TARGET_S = 0.5
FAST = ("--help", "sql", "history", "db current")
SESSION = "startup-1"
ENTRY = "import sys; from tooltray.memory.cli.main import main; sys.argv[0] = 'tooltray'; main()"
FLOORS = {
    "python -c pass": "pass",
    "import click": "import click",
    "import sqlalchemy": "import sqlalchemy",
}


def commands(db: str) -> dict[str, list[str]]:
    """Command label -> arguments (each on real input, so it does its whole job)."""
    return {
        "--help": ["--help"],
        "sql": ["sql", "SELECT id, turn FROM sessions", "--db", db],
        "history": ["history", SESSION, "--db", db],
        "db current": ["db", "current", "--db", db],
        "eval recall": ["eval", "recall", "--db", db, "--min-recall", "0"],
        "catalog tokens": ["catalog", "tokens", "--path", "text"],
        "chat --help": ["chat", "--help"],
        "demo --help": ["demo", "--help"],
    }


def make_store(folder: Path) -> str:
    """A SQLite store at head with one session and a few history rows."""
    from tooltray.memory.store import Changes, HistoryEvent, Load, Store

    url = f"sqlite:///{folder / 'startup.db'}"
    with Store(url) as store:
        loads = [Load("math_add", "semantic", 1, 0.9), Load("math_sub", "lexical", 1, 0.5)]
        events = [HistoryEvent(SESSION, 1, "selected", detail="selected")]
        store.apply(SESSION, Changes(turn=1, loads=loads, events=events, only_new=True))
    return url


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_command(
    args: Sequence[str], pythonpath: str | None, entry: str = ENTRY
) -> tuple[float, float]:
    """(CPU, wall) seconds of ``python -c ENTRY args`` from spawn to exit (it must succeed)."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    cpu, start = _child_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", entry, *args], env=env, capture_output=True, text=True, check=False
    )
    wall, cpu = time.perf_counter() - start, _child_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"tooltray {' '.join(args)} failed: {done.stderr.strip()[-300:]}")
    return cpu, wall


def measure(
    db: str, installs: dict[str, str | None], runs: int, only: Sequence[str] = ()
) -> dict[str, dict[str, Any]]:
    """Median seconds per command and install; runs interleave the installs to share noise."""
    samples: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for label, args in commands(db).items():
        if only and label not in only:
            continue
        per = samples.setdefault(label, {name: [] for name in installs})
        for _ in range(runs):
            for name, path in installs.items():
                per[name].append(time_command(args, path))
    return {label: {name: _summary(v) for name, v in per.items()} for label, per in samples.items()}


def floors(runs: int) -> dict[str, dict[str, Any]]:
    """Median seconds of each floor (see the module docstring)."""
    return {
        label: _summary([time_command([], None, code) for _ in range(runs)])
        for label, code in FLOORS.items()
    }


def _summary(runs: Sequence[tuple[float, float]]) -> dict[str, Any]:
    cpu, wall = [c for c, _ in runs], [w for _, w in runs]
    return {
        "cpu_s": round(statistics.median(cpu), 3),
        "wall_s": round(statistics.median(wall), 3),
        "runs": [[round(c, 3), round(w, 3)] for c, w in runs],
    }


def table(result: dict[str, dict[str, Any]], installs: Sequence[str]) -> Table:
    """Median seconds per command, one column per install."""
    out = Table(title="tooltray start-up: median of cold runs, CPU s (wall s)")
    out.add_column("command")
    for name in installs:
        out.add_column(name, justify="right")
    out.add_column(f"goal <= {TARGET_S} CPU s")
    for label, per in result.items():
        last = per[installs[-1]]["cpu_s"]
        goal = ("met" if last <= TARGET_S else "missed") if label in FAST else ""
        cells = [f"{per[n]['cpu_s']:.2f} ({per[n]['wall_s']:.2f})" for n in installs]
        out.add_row(label, *cells, goal)
    return out


def run(
    data_dir: Path,
    out_dir: Path,
    quick: bool = False,
    baseline: str | None = None,
    only: Sequence[str] = (),
) -> dict[str, Any]:
    """Time every command (or ``only`` these; ``quick``: 2 runs each), and ``baseline``'s."""
    baseline = baseline or os.environ.get("TOOLTRAY_STARTUP_BASELINE")
    installs: dict[str, str | None] = {"before": baseline} if baseline else {}
    installs["now"] = os.environ.get("PYTHONPATH")
    runs = 2 if quick else RUNS
    with tempfile.TemporaryDirectory() as tmp:
        result = measure(make_store(Path(tmp)), installs, runs, only)
    floor = floors(runs)
    Console(width=120).print(table(result, list(installs)))
    for label, cost in floor.items():
        print(f"floor: {label}: {cost['cpu_s']:.2f} CPU s ({cost['wall_s']:.2f} wall s)")
    now = {label: per["now"]["cpu_s"] for label, per in result.items()}
    met = all(now[label] <= TARGET_S for label in FAST if label in now)
    return {
        "runs": runs,
        "target_s": TARGET_S,
        "commands": result,
        "floors": floor,
        "fast_goal_met": met,
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The suite's own flags (shared by bench/run.py and this file)."""
    parser.add_argument("--baseline", default=None, help="PYTHONPATH of an install to compare")
    parser.add_argument("--only", default="", help="comma-separated command labels")


def run_args(data_dir: Path, out_dir: Path, opts: argparse.Namespace) -> dict[str, Any]:
    """The suite with parsed flags (``bench/run.py startup --baseline PKGDIR``)."""
    only = [x.strip() for x in opts.only.split(",") if x.strip()]
    return run(data_dir, out_dir, quick=opts.quick, baseline=opts.baseline, only=only)


def main(argv: list[str] | None = None) -> int:
    """``python bench/startup.py [--baseline PKGDIR] [--quick] [--only LABELS]``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    add_arguments(parser)
    run_args(Path("."), Path("."), parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
