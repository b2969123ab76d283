"""Suite ``latency``: selection p50/p99 at 100, 1,000 and 10,000 tools, with and without the
query embedding.

Catalogs are sampled from the sealtools, bfcl and toolbench dev corpora (renamed copies beyond
their 8,400 tools, fixed seed). Search cost does not depend on what the document vectors are, so
documents get deterministic random unit vectors (embedding 10,000 docs would take minutes and
measure the embedder, not selection); the query embedding is the real MiniLM model.
Targets: p50 <= 1 ms at 1,000 and <= 10 ms at 10,000 tools without the query embedding; <= 10 ms
at 1,000 tools with it.
"""

from __future__ import annotations

import json
import random
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from tooltray.memory.embedding import default_embedder, normalise
from tooltray.memory.hybrid import ToolIndex
from tooltray.tools.catalog import read_catalog
from tooltray.tools.spec import ToolSpec

SIZES = (100, 1_000, 10_000)
TARGETS_MS = {"1000 no-embed p50": 1.0, "10000 no-embed p50": 10.0, "1000 with-embed p50": 10.0}


class RandomDocs:
    """Random unit document vectors, the real model for queries."""

    id, dim = "random-docs", 384

    def embed(self, texts: Sequence[str], kind: str = "document") -> Any:
        if kind == "query":
            return default_embedder().embed(texts, "query")
        rng = np.random.default_rng(len(texts))
        return normalise(rng.standard_normal((len(texts), self.dim)))


def pool(data: Path) -> list[ToolSpec]:
    """Tools of the big corpora, in a fixed order."""
    specs: list[ToolSpec] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("sealtools", "bfcl", "toolbench"):
            if (data / name / "tools.jsonl").is_file():
                specs += read_catalog(data / name / "tools.jsonl", sanitize=True).tools
    return specs


def catalog(specs: list[ToolSpec], size: int) -> list[ToolSpec]:
    """``size`` tools sampled with a fixed seed; copies get a numeric suffix."""
    rng = random.Random(size)
    out = []
    for i in range(size):
        spec = specs[rng.randrange(len(specs))] if size > len(specs) else specs[i]
        out.append(spec.model_copy(update={"name": f"{spec.name[:56]}_{i}", "bundle": None}))
    return out


def timed(fn: Callable[[], Any], repeats: int) -> list[float]:
    """Milliseconds of each call."""
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def measure(specs: list[ToolSpec], queries: list[str], repeats: int) -> dict[str, dict[str, float]]:
    """p50/p99 per size, with a precomputed query vector and with the embedding in the loop."""
    results: dict[str, dict[str, float]] = {}
    embedder = default_embedder()
    vectors = embedder.embed(queries, "query")
    for size in SIZES:
        index = ToolIndex(catalog(specs, size), RandomDocs())
        for label, use_vec in (("no-embed", True), ("with-embed", False)):
            times: list[float] = []
            for q, v in zip(queries, vectors, strict=True):
                vec = v if use_vec else None
                times += timed(lambda i=index, q=q, vec=vec: i.picks(q, 16, vec), repeats)
            times.sort()
            results[f"{size} {label}"] = {
                "p50": round(statistics.median(times), 3),
                "p99": round(times[int(0.99 * (len(times) - 1))], 3),
            }
    return results


def run(data_dir: Path, out_dir: Path, *, quick: bool = False) -> dict[str, Any]:
    """Measure and print the latency table."""
    lines = (data_dir / "bfcl_multiturn" / "queries.dev.jsonl").read_text().splitlines()
    queries = [json.loads(x)["query"] for x in lines[: 10 if quick else 40]]
    results = measure(pool(data_dir), queries, 3 if quick else 10)
    table = Table(title="selection latency (ms)")
    for col in ("catalog", "p50", "p99", "target p50"):
        table.add_column(col)
    for key, row in results.items():
        target = TARGETS_MS.get(f"{key} p50")
        table.add_row(key, str(row["p50"]), str(row["p99"]), f"<= {target}" if target else "")
    Console().print(table)
    met = {k: results[k.rsplit(" ", 1)[0]]["p50"] <= v for k, v in TARGETS_MS.items()}
    return {"results": results, "targets_ms": TARGETS_MS, "met": met}
