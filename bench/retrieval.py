"""Suite ``retrieval``: R@1/5/10, C@5/10 and tokens loaded per query: lexical, dense, hybrid.

Runs over every corpus folder under ``--data`` (tools.jsonl + queries.dev.jsonl). ``lexical`` and
``dense`` are the single retrievers' top 10 (``tokens``: of those 10). ``hybrid`` ranks by the
fused, bundle-lifted scores (R@k, C@k), and loads ``ToolIndex.picks`` (at most 16: tools over the
calibrated bar, each sentence's best, bundle-mates): ``tokens`` is the o200k size of the native
OpenAI schemas of the picks, and ``picks`` / ``picked recall`` / ``picked complete`` describe
that set. All three methods score each sentence of a request too (``ToolIndex.search``).
The query is ``build_query`` over the user messages (earlier turns + query). Document vectors are
cached in ``OUT/embeddings.db``; each query is embedded once and shared by the three methods.
Tokens follow ``boilerplate_once`` (on by default: each bundle's shared span on its first
loaded tool only; ``TOOLTRAY_BOILERPLATE_ONCE=false`` counts whole descriptions); rankings are
unchanged by it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from common import Corpus, Scores, corpora, load_corpus, messages
from rich.console import Console
from rich.table import Table

from tooltray.memory.config import Settings
from tooltray.memory.embedders import CachedEmbedder, default_embedder
from tooltray.memory.retrieval import QUERY_MODES, Query, ToolIndex, build_query
from tooltray.memory.store import Store
from tooltray.tools.render import bundle_spans, state_once, strip_all, tokens_per_tool
from tooltray.tools.spec import ToolSpec

METHODS = ("lexical", "dense", "hybrid")
MAX_PICKS = 16
REFERENCE_BM25 = {  # ../shared/data/README.md: BM25 R@10, C@10
    "bfcl_multiturn": (81.4, 72.7),
    "toolbench": (68.7, 50.8),
    "bfcl": (75.8, 74.1),
    "sealtools": (84.8, 63.2),
    "metatool": (55.3, 48.8),
}


def query_vectors(index: ToolIndex, queries: list[Query]) -> list[Any]:
    """Every query's vectors as selection computes them online (one forward pass per query)."""
    return [index.embed_query(q) for q in queries]


def hybrid_ranking(index: ToolIndex, query: Query, vec: Any) -> tuple[list[str], list[str]]:
    """(what loads: the picks, the hybrid ranking scored at k)."""
    picks = [h.name for h in index.picks(query, MAX_PICKS, query_vector=vec)]
    return picks, [h.name for h in index.search(query, 10, "hybrid", query_vector=vec)]


def matched_and_spans(
    tools: list[ToolSpec],
) -> tuple[list[ToolSpec], dict[str, list[str]]]:
    """(what the index matches, each bundle's shared spans), as ``boilerplate_once`` sets them.

    Off (``TOOLTRAY_BOILERPLATE_ONCE=false``), the index matches the catalog and no span is
    cut. On (the default), the model sees each bundle's shared span on the first loaded tool
    of that bundle only (:class:`ShownTokens`); set
    ``TOOLTRAY_BENCH_MATCH_STRIPPED=1`` to also match tools without the span (on
    bfcl_multiturn: hybrid R@10 92.6 -> 91.9, C@10 86.1 -> 84.3).
    """
    if not Settings(db="sqlite://").boilerplate_once:
        return tools, {}
    spans = bundle_spans(tools)
    stripped = os.environ.get("TOOLTRAY_BENCH_MATCH_STRIPPED") == "1"
    return (strip_all(tools, spans) if stripped else tools), spans


class ShownTokens:
    """o200k tokens of a loaded set as the planner shows it (``state_once`` over the set).

    The first loaded tool of a bundle keeps the bundle's span, the others are counted cut.
    """

    def __init__(self, tools: list[ToolSpec], spans: dict[str, list[str]]) -> None:
        self.full = tokens_per_tool(tools, "openai")
        self.cut = tokens_per_tool(strip_all(tools, spans), "openai") if spans else self.full
        self.bundle = {t.name: t.bundle for t in tools}
        self.catalog = sum(tokens_per_tool(state_once(tools, spans), "openai").values())

    def __call__(self, names: list[str]) -> int:
        """Tokens of ``names`` loaded together, in this order."""
        seen: set[str | None] = set()
        total = 0
        for name in names:
            bundle = self.bundle[name]
            total += self.cut[name] if bundle is not None and bundle in seen else self.full[name]
            seen.add(bundle)
        return total


def evaluate(corpus: Corpus, store: Store, mode: str = "adaptive") -> dict[str, Any]:
    """Metrics of every method on one corpus."""
    matched, spans = matched_and_spans(corpus.tools)
    index = ToolIndex(matched, CachedEmbedder(default_embedder(), store))
    tokens = ShownTokens(corpus.tools, spans)
    queries = [build_query(messages(q), mode) for q in corpus.queries]
    vectors = query_vectors(index, queries)
    scores = {m: Scores() for m in METHODS}
    picked = {"picks": 0.0, "picked recall": 0.0, "picked complete": 0.0}
    for row, query, vec in zip(corpus.queries, queries, vectors, strict=True):
        gold = row["gold"]
        for method in ("lexical", "dense"):
            top = [h.name for h in index.search(query, 10, method, query_vector=vec)]
            scores[method].add(top, gold, tokens(top))
        loads, ranked = hybrid_ranking(index, query, vec)
        scores["hybrid"].add(ranked, gold, tokens(loads))
        picked["picks"] += len(loads)
        picked["picked recall"] += 100 * sum(g in loads for g in gold) / max(len(gold), 1)
        picked["picked complete"] += 100 * float(all(g in loads for g in gold))
    n = max(len(corpus.queries), 1)
    methods = {m: s.result() for m, s in scores.items()}
    methods["hybrid"].update({k: round(v / n, 1) for k, v in picked.items()})
    return {
        "queries": len(corpus.queries),
        "tools": len(corpus.tools),
        "all_tools_tokens": tokens.catalog,
        "boilerplate_bundles": len(spans),
        "methods": methods,
    }


def verdict(corpus: str, res: dict[str, Any]) -> dict[str, bool]:
    """The issue's targets: hybrid R@10 and C@10 >= BM25 reference + 10 and above both singles."""
    m = res["methods"]
    ref = REFERENCE_BM25.get(corpus)
    out = {
        f"{k} above best single": m["hybrid"][k] > max(m["lexical"][k], m["dense"][k])
        for k in ("R@10", "C@10")
    }
    if ref is not None:
        out["R@10 >= BM25 ref + 10"] = m["hybrid"]["R@10"] >= ref[0] + 10
        out["C@10 >= BM25 ref + 10"] = m["hybrid"]["C@10"] >= ref[1] + 10
    return out


def table(results: dict[str, Any]) -> Table:
    """One row per corpus and method, with the BM25 reference on the hybrid row."""
    out = Table(title="retrieval (dev splits)")
    cols = (
        "corpus",
        "method",
        "R@1",
        "R@5",
        "R@10",
        "C@5",
        "C@10",
        "tokens",
        "picks",
        "ref R@10/C@10",
    )
    for col in cols:
        out.add_column(col, justify="left" if col in ("corpus", "method") else "right")
    for corpus, res in results.items():
        ref = REFERENCE_BM25.get(corpus)
        for method, m in res["methods"].items():
            cells = [str(m[k]) for k in ("R@1", "R@5", "R@10", "C@5", "C@10", "tokens")]
            extra = [
                str(m.get("picks", "")),
                f"{ref[0]}/{ref[1]}" if ref and method == "hybrid" else "",
            ]
            out.add_row(corpus, method, *cells, *extra)
    return out


def query_modes(corpus: Corpus, store: Store) -> dict[str, Any]:
    """Every way of turning the conversation into a query, on a corpus with earlier turns."""
    out = {}
    for mode in QUERY_MODES:
        m = evaluate(corpus, store, mode)["methods"]
        out[mode] = {k: m["hybrid"][k] for k in ("R@1", "R@5", "R@10", "C@5", "C@10", "tokens")}
    return out


def run(data_dir: Path, out_dir: Path, *, quick: bool = False) -> dict[str, Any]:
    """Evaluate every corpus (``quick``: the first 100 queries of each)."""
    store = Store(f"sqlite:///{out_dir / 'embeddings.db'}", auto_upgrade=True)
    limit = 100 if quick else None
    loaded = [load_corpus(f, limit) for f in corpora(data_dir)]
    results = {c.name: evaluate(c, store) for c in loaded}
    console = Console(width=130)
    console.print(table(results))
    extra: dict[str, Any] = {}
    multi = [c for c in loaded if any(q.get("turns") for q in c.queries)]
    for corpus in multi:
        extra[f"query_modes_{corpus.name}"] = modes = query_modes(corpus, store)
        t = Table(title=f"query construction on {corpus.name} (hybrid)")
        for col in ("mode", "R@1", "R@5", "R@10", "C@5", "C@10", "tokens"):
            t.add_column(col)
        for mode, m in modes.items():
            t.add_row(mode, *(str(v) for v in m.values()))
        console.print(t)
    targets = {c: verdict(c, r) for c, r in results.items()}
    console.print(
        {c: [k for k, ok in v.items() if not ok] or "all met" for c, v in targets.items()}
    )
    return {"corpora": results, "targets": targets, **extra, "numpy": np.__version__}
