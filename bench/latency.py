"""Suite ``latency``: selection (``ToolIndex.picks``) p50/p99 at 100, 1,000 and 10,000 tools.

Catalogs are sealtools' tools, and beyond its 4,076 perturbed copies of them (a suffix on the
name, two description words swapped with another tool's, the same bundle structure per copy). Doc
vectors are the real MiniLM vectors of the originals (from the bench cache; a copy gets its
original's vector plus 5% noise): search cost does not depend on what the vectors are, and
embedding 10,000 documents would measure the embedder, not selection. Four timings per size:
``no-embed`` (query vectors precomputed), ``with-embed`` (the query is embedded in the loop, real
model, long queries compacted as shipped), ``with-embed-whole`` (the same, never compacted,
alternating call by call with ``with-embed``), ``lexical`` (no embedder) and ``search`` (a whole
``load_tools`` answer, ``IndexSelector.search``, its query embedded: several picks, the near
ties and the bundles named past the answer, all from one scoring). Queries: 40 chat
turns of bfcl_multiturn, and 40 long multi-task requests of sealtools (3-5 sentences, each also
embedded on its own).

Targets: p50 <= 1 ms at 1,000 and <= 10 ms at 10,000 tools without the query embedding;
<= 10 ms at 1,000 tools with it, and still with the learned signals of 10,000 past turns read from
a SQLite store (``with-embed+learned``: embed, pick, then the companions of the top picks and the
past requests' votes, as the planner asks them; ``learned-signals`` times the two reads alone).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from common import load_corpus
from learned import ask, fill, signals, timed_ms
from rich.console import Console
from rich.table import Table

from tooltray.memory.config import Settings
from tooltray.memory.embedders import CachedEmbedder, DictCache, default_embedder, normalise
from tooltray.memory.embedders.minilm import COMPACT_OVER
from tooltray.memory.retrieval import ToolIndex, doc_text
from tooltray.memory.retrieval.selector import IndexSelector
from tooltray.memory.store import Store
from tooltray.tools.spec import ToolSpec

SIZES = (100, 1_000, 10_000)
TARGETS_MS = {
    "1000 no-embed chat": 1.0,
    "10000 no-embed chat": 10.0,
    "1000 with-embed chat": 10.0,
    "1000 with-embed+learned chat": 10.0,
}


def perturb(spec: ToolSpec, copy: int, rng: random.Random, words: list[str]) -> ToolSpec:
    """A distinct near-copy of ``spec``: suffixed name and bundle, two description words swapped."""
    desc = spec.description.split()
    for _ in range(min(2, len(desc))):
        desc[rng.randrange(len(desc))] = rng.choice(words)
    bundle = f"{spec.bundle[:58]}_{copy}" if spec.bundle else None
    return spec.model_copy(
        update={"name": f"{spec.name[:56]}_{copy}", "description": " ".join(desc), "bundle": bundle}
    )


def catalog(pool: list[ToolSpec], size: int) -> tuple[list[ToolSpec], list[int]]:
    """``size`` tools (fixed seed) and, for each, the index of the original it came from."""
    rng = random.Random(size)
    words = [w for s in pool[:500] for w in s.description.split()]
    if size <= len(pool):
        picked = sorted(rng.sample(range(len(pool)), size))
        return [pool[i] for i in picked], picked
    specs, origin = list(pool), list(range(len(pool)))
    for i in range(size - len(pool)):
        src = i % len(pool)
        specs.append(perturb(pool[src], 1 + i // len(pool), rng, words))
        origin.append(src)
    return specs, origin


class Vectors:
    """Precomputed document vectors; the real model for queries, embedded as the trinket does."""

    id, dim = "bench-vectors", 384

    def __init__(self, docs: Any) -> None:
        self.docs = docs

    def embed(self, texts: Any, kind: str = "document") -> Any:
        if kind == "query":
            return default_embedder().embed(texts, "query")
        return self.docs

    def embed_spans(self, text: str, spans: Any, kind: str = "query") -> Any:
        """The production path: the whole query and its sentences in one forward pass."""
        return default_embedder().embed_spans(text, spans, "query")


def timed(fn: Callable[[], Any], repeats: int) -> list[float]:
    """Milliseconds of each of ``repeats`` calls."""
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def percentiles(times: list[float]) -> dict[str, float]:
    """p50 and p99 in ms."""
    times = sorted(times)
    return {
        "p50": round(statistics.median(times), 3),
        "p99": round(times[int(0.99 * (len(times) - 1))], 3),
    }


def with_embed(index: ToolIndex, qs: list[str], repeats: int) -> dict[str, list[float]]:
    """``picks`` embedding the query in the loop: compacted and whole queries, side by side.

    One model, its ``compact_over`` switched before each call, so both see the same machine state.
    """
    emb, out = default_embedder(), {"with-embed": [], "with-embed-whole": []}
    try:
        for q in qs:
            for _ in range(repeats):
                for over, key in ((COMPACT_OVER, "with-embed"), (None, "with-embed-whole")):
                    emb.compact_over = over
                    out[key] += timed(lambda q=q: index.picks(q, 16), 1)
    finally:
        emb.compact_over = COMPACT_OVER
    return out


def measure_size(
    pool: list[ToolSpec], base: Any, size: int, queries: dict[str, list[str]], repeats: int
) -> dict[str, Any]:
    """The four timings for one catalog size and every query set."""
    specs, origin = catalog(pool, size)
    rng = np.random.default_rng(size)
    docs = normalise(base[origin] + 0.05 * rng.standard_normal((size, base.shape[1])))
    dense, lexical = ToolIndex(specs, Vectors(docs)), ToolIndex(specs)
    selector = IndexSelector(dense, dense.embedder, Settings(db="sqlite://"))
    out: dict[str, Any] = {}
    for label, qs in queries.items():
        vecs = [dense.embed_query(q) for q in qs]
        runs = {
            "no-embed": lambda q, v: dense.picks(q, 16, query_vector=v),
            "lexical": lambda q, v: lexical.picks(q, 16),
        }
        for name, fn in runs.items():
            times: list[float] = []
            for q, v in zip(qs, vecs, strict=True):
                times += timed(lambda fn=fn, q=q, v=v: fn(q, v), repeats)
            out[f"{size} {name} {label}"] = percentiles(times)
        for name, times in with_embed(dense, qs, 3).items():
            out[f"{size} {name} {label}"] = percentiles(times)
        answers = [t for q in qs for t in timed(partial(selector.search, q), 3)]
        out[f"{size} search {label}"] = percentiles(answers)
    return out


def measure_learned(
    pool: list[ToolSpec], base: Any, chat: list[str], out_dir: Path, repeats: int
) -> dict[str, Any]:
    """Selection at 1,000 tools with 10,000 past turns in a SQLite store, signals included."""
    specs, origin = catalog(pool, 1_000)
    rng = np.random.default_rng(1_000)
    docs = normalise(base[origin] + 0.05 * rng.standard_normal((len(specs), base.shape[1])))
    index = ToolIndex(specs, Vectors(docs))
    vecs = [index.embed_query(q) for q in chat]
    path = out_dir / "learned.db"
    path.unlink(missing_ok=True)
    store = Store(f"sqlite:///{path}")
    fill(store, [s.name for s in specs], np.vstack([v[:1] for v in vecs]))
    sig = signals(store)

    def select(q: str) -> None:
        v = index.embed_query(q)
        ask(sig, [h.name for h in index.picks(q, 16, query_vector=v)], v[:1])

    total, reads = [], []
    for q, v in zip(chat, vecs, strict=True):
        names = [h.name for h in index.picks(q, 16, query_vector=v)]
        for _ in range(repeats):
            total.append(timed_ms(lambda q=q: select(q)))
            reads.append(timed_ms(lambda n=names, v=v: ask(sig, n, v[:1])))
    store.close()
    return {
        "1000 with-embed+learned chat": percentiles(total),
        "1000 learned-signals chat": percentiles(reads),
    }


def run(data_dir: Path, out_dir: Path, *, quick: bool = False) -> dict[str, Any]:
    """Measure and print the latency table."""
    seal = load_corpus(data_dir / "sealtools")
    store = Store(f"sqlite:///{out_dir / 'embeddings.db'}", auto_upgrade=True)
    base = CachedEmbedder(default_embedder(), store).embed_documents(
        [doc_text(s) for s in seal.tools]
    )
    n = 10 if quick else 40
    chat = [q["query"] for q in load_corpus(data_dir / "bfcl_multiturn").queries[:n]]
    queries = {"chat": chat, "long": [q["query"] for q in seal.queries[:n]]}
    default_embedder().embed(["warm up"], "query")
    results: dict[str, Any] = {}
    for size in SIZES:
        results.update(measure_size(seal.tools, base, size, queries, 3 if quick else 10))
    results.update(measure_learned(seal.tools, base, chat, out_dir, 3 if quick else 5))
    table = Table(title="selection latency: ToolIndex.picks (ms)")
    for col in ("catalog", "timing", "queries", "p50", "p99", "target p50"):
        table.add_column(col)
    for key, row in results.items():
        target = TARGETS_MS.get(key)
        table.add_row(
            *key.split(" "), str(row["p50"]), str(row["p99"]), f"<= {target}" if target else ""
        )
    Console(width=120).print(table)
    met = {k: results[k]["p50"] <= v for k, v in TARGETS_MS.items()}
    return {
        "results": results,
        "targets_ms": TARGETS_MS,
        "met": met,
        "cache": type(DictCache).__name__,
    }
