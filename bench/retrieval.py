"""Suite ``retrieval``: R@1/5/10, C@5/10 and tokens loaded per query, lexical vs dense vs hybrid.

Runs over every corpus folder under ``--data`` (or ``--data`` itself when it holds a
``tools.jsonl``): tools.jsonl + queries.dev.jsonl in the ../shared/data format. ``hybrid`` is the
selector tooltray loads with: the tools that clear the calibrated bar plus bundle-mates of strong
matches, then the fused ranking to fill k. ``tokens`` is the o200k size of the OpenAI schemas of
what the selector would load for the query (at most 16 picks). Document embeddings are cached in
``OUT/embeddings.db`` so a second run does not embed the catalogs again.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from tooltray.memory.embedding import CachedEmbedder, default_embedder
from tooltray.memory.hybrid import ToolIndex, build_query
from tooltray.memory.store import Store
from tooltray.tools.catalog import read_catalog
from tooltray.tools.tokens import tokens_per_tool

METHODS = ("lexical", "dense", "hybrid")
KS = (1, 5, 10)
REFERENCE_BM25 = {  # ../shared/data/README.md, BM25 R@10 / C@10
    "bfcl_multiturn": (81.4, 72.7),
    "toolbench": (68.7, 50.8),
    "bfcl": (75.8, 74.1),
    "sealtools": (84.8, 63.2),
    "metatool": (55.3, 48.8),
}


def corpora(data: Path) -> list[Path]:
    """The corpus folders under ``data`` (or ``data`` itself)."""
    if (data / "tools.jsonl").is_file():
        return [data]
    return sorted(p for p in data.iterdir() if (p / "tools.jsonl").is_file())


def ranking(index: ToolIndex, method: str, query: str, vector: Any) -> list[str]:
    """Top-10 names for one method (hybrid = picks with bundle-mates, then the fused order)."""
    if method != "hybrid":
        return [h.name for h in index.search(query, 10, method, vector)]
    picks = [h.name for h in index.picks(query, 16, vector)]
    rest = [h.name for h in index.search(query, 26, "hybrid", vector) if h.name not in picks]
    return (picks + rest)[:10]


def evaluate(
    folder: Path, store: Store, limit: int | None, mode: str = "current"
) -> dict[str, Any]:
    """Metrics of every method on one corpus."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        catalog = read_catalog(folder / "tools.jsonl", sanitize=True)
    embedder = CachedEmbedder(default_embedder(), store)
    index = ToolIndex(catalog.tools, embedder)
    tokens = tokens_per_tool(catalog.tools, "openai")
    lines = (folder / "queries.dev.jsonl").read_text(encoding="utf-8").splitlines()
    queries = [json.loads(line) for line in lines if line.strip()][:limit]
    sums = {m: dict.fromkeys(["R@1", "R@5", "R@10", "C@5", "C@10", "tokens"], 0.0) for m in METHODS}
    for q in queries:
        gold = [catalog.renamed.get(g, g) for g in q["gold"]]
        text = build_query([*(q.get("turns") or []), q["query"]], mode)
        vector = default_embedder().embed([text], "query")[0]
        for method in METHODS:
            _score(sums[method], ranking(index, method, text, vector), gold)
            loaded = _loaded(index, method, text, vector)
            sums[method]["tokens"] += sum(tokens[n] for n in loaded)
    n = max(len(queries), 1)
    out = {
        m: {k: round(100 * v / n if k != "tokens" else v / n, 1) for k, v in s.items()}
        for m, s in sums.items()
    }
    return {"queries": len(queries), "tools": len(catalog.tools), "methods": out}


def _loaded(index: ToolIndex, method: str, query: str, vector: Any) -> list[str]:
    if method == "hybrid":
        return [h.name for h in index.picks(query, 16, vector)]
    return [h.name for h in index.search(query, 10, method, vector)]


def _score(acc: dict[str, float], top: list[str], gold: list[str]) -> None:
    for k in KS:
        acc[f"R@{k}"] += sum(g in top[:k] for g in gold) / len(gold)
    for k in (5, 10):
        acc[f"C@{k}"] += float(all(g in top[:k] for g in gold))


def query_modes(folder: Path, store: Store, limit: int | None) -> dict[str, Any]:
    """How the conversation becomes the query, measured on a corpus with earlier turns."""
    return {
        mode: evaluate(folder, store, limit, mode)["methods"]["hybrid"]
        for mode in ("current", "current+previous", "all")
    }


def table(results: dict[str, Any]) -> Table:
    """One row per corpus and method, with the BM25 reference where there is one."""
    out = Table(title="retrieval (dev splits)")
    for col in (
        "corpus",
        "method",
        "R@1",
        "R@5",
        "R@10",
        "C@5",
        "C@10",
        "tokens",
        "BM25 ref R@10/C@10",
    ):
        out.add_column(col, justify="right" if col not in ("corpus", "method") else "left")
    for corpus, res in results.items():
        ref = REFERENCE_BM25.get(corpus)
        for method, m in res["methods"].items():
            cells = [str(m[k]) for k in ("R@1", "R@5", "R@10", "C@5", "C@10", "tokens")]
            out.add_row(
                corpus, method, *cells, f"{ref[0]}/{ref[1]}" if ref and method == "hybrid" else ""
            )
    return out


def run(data_dir: Path, out_dir: Path, *, quick: bool = False) -> dict[str, Any]:
    """Evaluate every corpus; with ``quick``, 100 queries each."""
    store = Store(f"sqlite:///{out_dir / 'embeddings.db'}", auto_upgrade=True)
    limit = 100 if quick else None
    results = {folder.name: evaluate(folder, store, limit) for folder in corpora(data_dir)}
    Console().print(table(results))
    extra: dict[str, Any] = {}
    multi = next((f for f in corpora(data_dir) if f.name == "bfcl_multiturn"), None)
    if multi is not None:
        extra["query_modes_bfcl_multiturn"] = query_modes(multi, store, limit)
        Console().print(
            {"query modes (hybrid) on bfcl_multiturn": extra["query_modes_bfcl_multiturn"]}
        )
    verdict = {
        c: {
            "R@10 +10 over BM25": r["methods"]["hybrid"]["R@10"] >= REFERENCE_BM25[c][0] + 10,
            "C@10 +10 over BM25": r["methods"]["hybrid"]["C@10"] >= REFERENCE_BM25[c][1] + 10,
            "above best single": all(
                r["methods"]["hybrid"][k]
                > max(r["methods"]["lexical"][k], r["methods"]["dense"][k])
                for k in ("R@10", "C@10")
            ),
        }
        for c, r in results.items()
        if c in REFERENCE_BM25
    }
    return {"corpora": results, "targets": verdict, **extra, "np": np.__version__}
