"""Suite ``startup``: how long each ``tooltray`` command takes from a cold process to its exit.

``python bench/run.py startup [--quick]`` (or ``python bench/startup.py [--baseline PKGDIR]``).

Each command runs ``RUNS`` times in a fresh ``python`` subprocess (the console script's own
code path: ``tooltray.memory.cli.main``), against a small SQLite store with one stored session;
the table shows the median wall time. The goal is at most ``TARGET_S`` for ``--help``, ``sql``,
``history`` and ``db``: they must not load the agent loop, the embedders or onnxruntime.

``--baseline PKGDIR`` (or ``TOOLTRAY_STARTUP_BASELINE``) times a second install side by side,
e.g. a tree whose ``tooltray/`` links to an older checkout, so before/after share one machine
state (start-up times move with the machine's load).
"""

from __future__ import annotations

import argparse
import os
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


def time_command(args: Sequence[str], pythonpath: str | None) -> float:
    """Seconds from spawning ``python -c ENTRY args`` to its exit (it must succeed)."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, *args], env=env, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"tooltray {' '.join(args)} failed: {done.stderr.strip()[-300:]}")
    return seconds


def measure(db: str, installs: dict[str, str | None], runs: int) -> dict[str, dict[str, Any]]:
    """Median seconds per command and install; runs interleave the installs to share noise."""
    samples: dict[str, dict[str, list[float]]] = {}
    for label, args in commands(db).items():
        per = samples.setdefault(label, {name: [] for name in installs})
        for _ in range(runs):
            for name, path in installs.items():
                per[name].append(time_command(args, path))
    return {
        label: {
            name: {"median_s": round(statistics.median(v), 3), "runs": [round(x, 3) for x in v]}
            for name, v in per.items()
        }
        for label, per in samples.items()
    }


def table(result: dict[str, dict[str, Any]], installs: Sequence[str]) -> Table:
    """Median seconds per command, one column per install."""
    out = Table(title=f"tooltray start-up: median of {RUNS} cold runs (s)")
    out.add_column("command")
    for name in installs:
        out.add_column(name, justify="right")
    out.add_column(f"goal <= {TARGET_S}")
    for label, per in result.items():
        last = per[installs[-1]]["median_s"]
        goal = ("met" if last <= TARGET_S else "missed") if label in FAST else ""
        out.add_row(label, *(f"{per[n]['median_s']:.2f}" for n in installs), goal)
    return out


def run(data_dir: Path, out_dir: Path, quick: bool = False, baseline: str | None = None) -> dict:
    """Time every command (``quick``: 2 runs each) here and, if given, in ``baseline``."""
    baseline = baseline or os.environ.get("TOOLTRAY_STARTUP_BASELINE")
    installs: dict[str, str | None] = {"before": baseline} if baseline else {}
    installs["now"] = os.environ.get("PYTHONPATH")
    runs = 2 if quick else RUNS
    with tempfile.TemporaryDirectory() as tmp:
        result = measure(make_store(Path(tmp)), installs, runs)
    Console(width=120).print(table(result, list(installs)))
    now = {label: per["now"]["median_s"] for label, per in result.items()}
    met = all(now[label] <= TARGET_S for label in FAST)
    return {"runs": runs, "target_s": TARGET_S, "commands": result, "fast_goal_met": met}


def main(argv: list[str] | None = None) -> int:
    """``python bench/startup.py [--baseline PKGDIR] [--quick]``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", default=None, help="PYTHONPATH of an install to compare")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    run(Path("."), Path("."), quick=args.quick, baseline=args.baseline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
