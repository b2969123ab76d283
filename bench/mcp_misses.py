"""Why a model-written ``load_tools`` search misses its tool: a breakdown by shape and cause.

``python bench/mcp_misses.py --corpus mcp20 [--sample 300] [--path openai] [--out FILE]``.
The same sample as ``bench/run.py mcp_search`` (``mcp_search.sampled``), cold searches only
(the selector's answer to the query, nothing loaded before it). Per miss: the needed tool's rank
in the fused, lexical and dense scores of the text the query is ranked by, whether a server the
query names is the tool's server, whether the tool's description is CJK, and whether the query
shares a word with the tool's text. The cause is the first that applies:

- ``server mismatch``: the query names a server (the reader picked bundles) and not the tool's;
- ``cjk``: the tool's description is mostly CJK (the embedder and BM25 read only its name);
- ``no shared word``: the query shares no word with the tool's name, description or parameters;
- ``rank 6-10`` / ``rank 11-30`` / ``rank > 30``: the tool ranks behind the answer's places.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import load_registry  # noqa: E402
from mcp_search import read_searches, sampled  # noqa: E402
from session import base_settings, open_trinket  # noqa: E402

from tooltray.memory.retrieval.scoring import doc_text, terms  # noqa: E402

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def is_cjk(text: str) -> bool:
    """Whether most of ``text``'s letters are CJK."""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(bool(_CJK.match(c)) for c in letters) > len(letters) / 2


def rank(row: Any, i: int) -> int:
    """1-based rank of tool ``i`` in ``row`` (ties count against it)."""
    return int(np.sum(np.asarray(row) >= row[i]))


def cause(info: dict[str, Any]) -> str:
    """The first cause that applies to a miss (module docstring)."""
    if info["bundles"] and not info["server_ok"]:
        return "server mismatch"
    if info["cjk"]:
        return "cjk"
    if not info["shared"]:
        return "no shared word"
    r = info["rank"]
    bands = ((5, "rank 1-5"), (10, "rank 6-10"), (30, "rank 11-30"))
    return next((name for top, name in bands if r <= top), "rank > 30")


def analyse(trinket: Any, registry: Any, row: dict[str, Any]) -> dict[str, Any]:
    """One cold search: hit, and the ranks and facts behind it."""
    selector = trinket.catalog.selector()
    index = selector.index
    answer = [c.name for c in selector.search(row["query"], ()) if not c.mention]
    ask = selector._reader.read(row["query"])
    i = index.position[row["tool"]]
    scored = index.score(ask.text, query_vector=selector._vector(ask.text))[0]
    spec = registry.get(row["tool"])
    bundle = index.bundles.of[i]
    return {
        "id": row["id"], "shape": row["shape"], "query": row["query"], "tool": row["tool"],
        "hit": row["tool"] in answer, "answer": answer, "bundles": list(ask.bundles),
        "server_ok": bundle in ask.bundles, "cjk": is_cjk(spec.description or ""),
        "shared": bool(set(terms(row["query"])) & set(terms(doc_text(spec)))),
        "rank": rank(scored.fused, i), "lexical_rank": rank(scored.lexical_z, i),
        "dense_rank": rank(scored.dense_z, i), "score": round(float(scored.fused[i]), 3),
        "top": round(float(np.max(scored.fused)), 3),
    }  # fmt: skip


def breakdown(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Hits by shape; misses by shape and cause; the better retriever of each miss."""
    by_shape: dict[str, list[bool]] = defaultdict(list)
    causes: dict[str, Counter[str]] = defaultdict(Counter)
    better: Counter[str] = Counter()
    for r in rows:
        by_shape[r["shape"]].append(r["hit"])
        if not r["hit"]:
            causes[r["shape"]][cause(r)] += 1
            causes["all"][cause(r)] += 1
            lex, den = r["lexical_rank"], r["dense_rank"]
            better["lexical" if lex < den else "dense" if den < lex else "tie"] += 1
    shares = {s: round(sum(h) / len(h), 3) for s, h in sorted(by_shape.items())}
    every = [r["hit"] for r in rows]
    shares["all"] = round(sum(every) / max(1, len(every)), 3)
    shares["answer_size"] = round(sum(len(r["answer"]) for r in rows) / max(1, len(rows)), 2)
    return {"searches": len(rows), "shares": shares, "misses": len(every) - sum(every),
            "causes": {k: dict(v.most_common()) for k, v in causes.items()},
            "better_retriever_of_misses": dict(better)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Analyse one corpus's sample and print (and write) the breakdown."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path("bench/data/mcp/corpus"))
    parser.add_argument("--corpus", default="mcp20")
    parser.add_argument("--path", default="openai")
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--out", type=Path)
    opts = parser.parse_args(argv)
    registry, names = load_registry(opts.data, opts.corpus)
    searches = sampled(read_searches(opts.data, opts.corpus), opts.sample)
    rows = []
    with tempfile.TemporaryDirectory(prefix="tooltray-mcp-misses-") as tmp:
        url, settings = f"sqlite:///{tmp}/s.db", base_settings(opts.path)
        with open_trinket(registry, url, settings) as trinket:
            trinket.catalog.selector().index.wait_for_vectors(900)
            for row in searches:
                tool = names.get(row["tool"], row["tool"])
                rows.append(analyse(trinket, registry, {**row, "tool": tool}))
    result = {"corpus": opts.corpus, **breakdown(rows), "rows": rows}
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=1))
    if opts.out:
        opts.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
