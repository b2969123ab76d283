"""Suite ``first_minute``: a never-seen catalog's first ``prepare``, and when dense scores join.

``python bench/run.py first_minute [--quick] [--sizes 500,2000,10000]``

Each size runs in a fresh ``python`` process (peak memory is the process's, and the embedding
memo starts empty): a synthetic catalog of N tools built from the dev corpora's real tool texts
(every ``tools.jsonl`` under ``--data``, repeated, each name given its position and each bundle
its copy number), a
fresh SQLite store, and ``embed_catalog = "background"``. Figures per size:

* ``first_prepare_ms``: the first session's ``prepare`` on the catalog (lexical selection, the
  vectors computed on a background thread meanwhile), in a process that has already served a
  40-tool catalog (``process_warm_up_s``: imports and token encoders, paid once a process);
* ``dense_join_s``: from the start of that ``prepare`` until the vectors are ready and stored
  (``--join-timeout S`` stops waiting; later prepares are then lexical);
* ``later_prepare_ms``: the median ``prepare`` of later sessions in the same process (dense);
* ``new_process_prepare_ms``: a new trinket on the same store with the memo cleared (a later
  process: vectors read from the store, none computed);
* ``peak_rss_mb``: the process's peak resident memory (``rss_before_mb`` before the catalog,
  ``peak_rss_at_join_mb`` once its vectors are in); ``ratio``: first / later (target <= 20).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

SIZES = (500, 2000, 10_000)
QUICK_SIZES = (500,)
TARGET_RATIO = 20.0
LATER = 7
HERE = Path(__file__).resolve().parent


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sizes``: catalog sizes to measure (comma-separated)."""
    parser.add_argument("--sizes", default=None, help="e.g. 500,2000,10000")
    parser.add_argument(
        "--join-timeout", type=float, default=None, help="stop waiting for vectors after S s"
    )


def catalog(data: Path, n: int) -> tuple[list[Any], list[str]]:
    """``n`` tools from the real texts under ``data`` (renamed per copy), and real queries."""
    from common import corpora

    from tooltray.tools.importers.catalog import read_catalog

    base, queries = [], []
    for folder in corpora(data):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base += read_catalog(folder / "tools.jsonl", sanitize=True).tools
        lines = (folder / "queries.dev.jsonl").read_text(encoding="utf-8").splitlines()[:3]
        queries += [json.loads(line)["query"] for line in lines if line.strip()]
    specs = []
    for i in range(n):
        spec, copy = base[i % len(base)], i // len(base)
        bundle = f"{spec.bundle[:120]} #{copy}" if spec.bundle else None
        name = f"{spec.name[:56]}_{i}"  # unique whatever the first 56 characters share
        specs.append(spec.model_copy(update={"name": name, "bundle": bundle}))
    return specs, queries


def _rss_mb() -> float:
    """The process's peak resident memory so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _prepare_ms(trinket: Any, sid: str, text: str) -> float:
    start = time.perf_counter()
    trinket.prepare(sid, [{"role": "user", "content": text}])
    return (time.perf_counter() - start) * 1000


def measure(data: Path, n: int, join_timeout: float | None = None) -> dict[str, Any]:
    """One size, in this process (run it in a fresh one)."""
    from tooltray.memory.config import Settings
    from tooltray.memory.core.trinket import ToolLoaderTrinket
    from tooltray.memory.embedders import clear_memo
    from tooltray.memory.store import Store
    from tooltray.tools.registry import ToolRegistry

    specs, queries = catalog(data, n)
    registry = ToolRegistry(specs)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/first.db"
        settings = Settings(db=url, embed_catalog="background")
        start = time.perf_counter()
        warm = ToolLoaderTrinket(ToolRegistry(specs[:40]), Store(url), settings=settings)
        _prepare_ms(warm, "warm-up", queries[-1])  # imports, token encoders: once a process
        warm.catalog.selector().index.wait_for_vectors()  # type: ignore[attr-defined]
        warm_up = time.perf_counter() - start
        rss_start = _rss_mb()
        trinket = ToolLoaderTrinket(registry, Store(url), settings=settings)
        start = time.perf_counter()
        first = _prepare_ms(trinket, "first", queries[0])
        index = trinket.catalog.selector().index  # type: ignore[attr-defined]
        lexical_first = not index.dense_ready
        joined = index.wait_for_vectors(join_timeout)
        join = time.perf_counter() - start
        rss_join = _rss_mb()
        texts = queries[1 : 1 + LATER]
        later = [_prepare_ms(trinket, f"later-{i}", q) for i, q in enumerate(texts)]
        clear_memo()
        again = ToolLoaderTrinket(registry, Store(url), settings=settings)
        fresh = _prepare_ms(again, "new-process", queries[1])
        dense_fresh = again.catalog.selector().index.dense_ready  # type: ignore[attr-defined]
    peak = _rss_mb()
    median = statistics.median(later)
    return {
        "tools": n,
        "process_warm_up_s": round(warm_up, 1),
        "rss_before_mb": round(rss_start),
        "peak_rss_at_join_mb": round(rss_join),
        "first_prepare_ms": round(first, 1),
        "first_was_lexical": lexical_first,
        "dense_join_s": round(join, 1) if joined else f"> {join_timeout:g} (not joined)",
        "later_prepare_ms": round(median, 1),
        "new_process_prepare_ms": round(fresh, 1),
        "new_process_dense": dense_fresh,
        "ratio": round(first / median, 1),
        "peak_rss_mb": round(peak),
    }


def _child(data: Path, n: int, join_timeout: float | None) -> dict[str, Any]:
    code = (
        f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import first_minute as m; "
        f"from pathlib import Path; "
        f"print(json.dumps(m.measure(Path({str(data)!r}), {n}, {join_timeout!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"size {n} failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def table(rows: list[dict[str, Any]]) -> Table:
    """The figures as a rich table."""
    t = Table(title=f"first prepare on a never-seen catalog (target ratio <= {TARGET_RATIO:g})")
    for col in ("tools", "first ms", "dense joins s", "later ms", "new process ms", "ratio", "MB"):
        t.add_column(col, justify="right")
    for r in rows:
        t.add_row(
            str(r["tools"]),
            str(r["first_prepare_ms"]),
            str(r["dense_join_s"]),
            str(r["later_prepare_ms"]),
            str(r["new_process_prepare_ms"]),
            str(r["ratio"]),
            str(r["peak_rss_mb"]),
        )
    return t


def run_args(data: Path, out: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Every size in its own process; prints the table, returns the rows."""
    sizes = QUICK_SIZES if args.quick else SIZES
    if args.sizes:
        sizes = tuple(int(s) for s in args.sizes.split(","))
    rows = [_child(data, n, args.join_timeout) for n in sizes]
    Console().print(table(rows))
    print(json.dumps(rows, indent=2))
    return {"rows": rows, "target_ratio": TARGET_RATIO}
