"""Store throughput and latency: batched use events, small applies, snapshots of big sessions.

    python bench/store_bench.py [--repeats 5] [--out DIR]

Runs on a temporary SQLite file, and on a fresh PostgreSQL database too when
``TOOLTRAY_TEST_PG_URL`` is set (``eval "$(bash .ci/pg.sh)"``). Prints JSON and a table; with
``--out`` also writes ``store.json``. Each number is the median of ``--repeats`` runs.

Targets: >= 5,000 used events/s batched (SQLite), apply p50 <= 2 ms, snapshot of a session with
200 loaded tools and 10,000 history rows <= 20 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tooltray.memory.store import Store
from tooltray.memory.store.records import Changes, HistoryEvent, Load, Use

TARGETS = {"uses_per_s": 5000.0, "apply_p50_ms": 2.0, "snapshot_ms": 20.0}


def bench_batched_uses(store: Store, batch: int = 5000) -> float:
    """Used events persisted per second when one Changes carries ``batch`` uses."""
    sid = f"uses-{uuid.uuid4().hex[:8]}"
    tools = [f"tool_{i}" for i in range(50)]
    store.apply(sid, Changes(turn=0, loads=[Load(n, "core", 0) for n in tools]))
    uses = [Use(tools[i % len(tools)], i // 100) for i in range(batch)]
    start = time.perf_counter()
    store.apply(sid, Changes(turn=batch // 100, uses=uses))
    return batch / (time.perf_counter() - start)


def bench_small_apply(store: Store, n: int = 300) -> tuple[float, float]:
    """p50 and p95 milliseconds of applying one use + turn bump to a 20-tool session."""
    sid = f"small-{uuid.uuid4().hex[:8]}"
    store.apply(sid, Changes(turn=0, loads=[Load(f"t{i}", "core", 0) for i in range(20)]))
    times = []
    for i in range(1, n + 1):
        start = time.perf_counter()
        store.apply(sid, Changes(turn=i, uses=[Use(f"t{i % 20}", i)]))
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return times[len(times) // 2], times[int(len(times) * 0.95)]


def bench_snapshot(store: Store, n: int = 100) -> float:
    """Median milliseconds of snapshot() on a session with 200 tools and 10,000 history rows."""
    sid = f"big-{uuid.uuid4().hex[:8]}"
    store.apply(
        sid, Changes(turn=1, loads=[Load(f"tool_{i}", "semantic", 1, 0.5) for i in range(200)])
    )
    filler = [HistoryEvent(sid, i // 50, "selected", f"tool_{i % 200}") for i in range(9800)]
    store.apply(sid, Changes(turn=200, events=filler))
    times = []
    for _ in range(n):
        start = time.perf_counter()
        snap = store.snapshot(sid)
        times.append((time.perf_counter() - start) * 1000)
        assert snap is not None and len(snap.loaded) == 200
    assert len(store.history(sid)) == 10000
    return statistics.median(times)


def run_backend(url: str, repeats: int) -> dict[str, float]:
    """All three measurements on ``url``, each the median over ``repeats`` runs."""
    with Store(url) as store:
        uses = [bench_batched_uses(store) for _ in range(repeats)]
        applies = [bench_small_apply(store) for _ in range(repeats)]
        snaps = [bench_snapshot(store) for _ in range(repeats)]
    return {
        "uses_per_s": round(statistics.median(uses)),
        "apply_p50_ms": round(statistics.median(a[0] for a in applies), 3),
        "apply_p95_ms": round(statistics.median(a[1] for a in applies), 3),
        "snapshot_ms": round(statistics.median(snaps), 3),
    }


@contextmanager
def fresh_pg(admin_url: str) -> Iterator[str]:
    """A throwaway database on the test server."""
    name = f"bench_{uuid.uuid4().hex[:12]}"
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


def measure(repeats: int) -> dict[str, Any]:
    """Run SQLite (always) and PostgreSQL (when configured)."""
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["sqlite"] = run_backend(f"sqlite:///{Path(tmp) / 'bench.db'}", repeats)
    admin = os.environ.get("TOOLTRAY_TEST_PG_URL")
    if admin:
        with fresh_pg(admin) as url:
            results["postgresql"] = run_backend(url, repeats)
    return results


def table(results: dict[str, Any]) -> str:
    """A plain-text table of the results against the targets."""
    keys = ["uses_per_s", "apply_p50_ms", "apply_p95_ms", "snapshot_ms"]
    lines = [f"{'backend':<12}" + "".join(f"{k:>15}" for k in keys)]
    for backend, row in results.items():
        lines.append(f"{backend:<12}" + "".join(f"{row[k]:>15}" for k in keys))
    target = [
        f"{'>=' if k == 'uses_per_s' else '<='}{TARGETS[k]:g}" if k in TARGETS else "" for k in keys
    ]
    lines.append(f"{'target':<12}" + "".join(f"{t:>15}" for t in target))
    return "\n".join(lines)


def run(data_dir: Path, out_dir: Path, *, quick: bool = False) -> dict[str, Any]:
    """Suite entry for bench/run.py (``data_dir`` is unused: the store bench makes its data)."""
    results = {"targets": TARGETS, "results": measure(2 if quick else 5)}
    print(table(results["results"]))
    return results


def main() -> None:
    """Parse arguments, measure, print JSON and the table, optionally write store.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    results = {"suite": "store", "targets": TARGETS, "results": measure(args.repeats)}
    print(json.dumps(results, indent=2))
    print(table(results["results"]))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "store.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
