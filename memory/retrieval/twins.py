"""Near-duplicate tools: pairs the catalog's embedding distribution puts far above the rest.

It is retrieval's own concern (two tools it cannot tell apart), run by ``catalog lint`` and, for
tools registered while an agent runs, by the trinket (:mod:`~tooltray.memory.core.registration`).

A pair is flagged when its cosine is :data:`STRONG_Z` deviations above the catalog's mean pair,
or :data:`PAIR_Z` above it with a high cosine or similar names. The retriever then says which of
the two it cannot tell apart: a query made of one tool's description that ranks the other first
(with tooltray's own index) means the first tool loses its requests to its twin.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from tooltray.memory.retrieval.index import ToolIndex
from tooltray.memory.retrieval.similarity import (
    Matrix,
    close_pairs,
    cosine_stats,
    name_similarity,
    unit_vectors,
)
from tooltray.memory.retrieval.text import doc_text
from tooltray.tools.boilerplate import bundle_spans, strip_spans
from tooltray.tools.finding import Finding, Severity
from tooltray.tools.names import match_key
from tooltray.tools.spec import ToolSpec

KIND = "near-duplicate"
STRONG_Z = 5.0
PAIR_Z = 4.0
HIGH_COSINE = 0.85
SIMILAR_NAME = 0.7
MAX_CHECKED = 300
QUERY_WORDS = 40

Ranker = Callable[[str], str | None]  # query -> the name the retriever ranks first


@dataclass(frozen=True)
class Pair:
    """Two tools and how alike they are."""

    a: int
    b: int
    cosine: float
    z: float
    name: float


def flagged(cosine: float, z: float, name: float) -> bool:
    """The near-duplicate rule (see the module docstring)."""
    return z >= STRONG_Z or (z >= PAIR_Z and (cosine >= HIGH_COSINE or name >= SIMILAR_NAME))


def pairs(
    tools: Sequence[ToolSpec], vectors: Matrix, rows: Sequence[int] | None = None
) -> list[Pair]:
    """Flagged pairs, most alike first (only pairs touching ``rows`` when given)."""
    mean, std = cosine_stats(vectors)
    out = []
    for i, j, cos in close_pairs(vectors, mean + PAIR_Z * std, rows):
        z = (cos - mean) / std
        name = name_similarity(tools[i].name, tools[j].name)
        if flagged(cos, z, name):
            out.append(Pair(i, j, cos, z, name))
    return sorted(out, key=lambda p: -p.z)


def query_text(spec: ToolSpec, spans: dict[str, list[str]]) -> str:
    """A request made of the tool's own description, its bundle's boilerplate cut out."""
    text = strip_spans(spec.description, spans.get(spec.bundle or "", []))
    words = text.split()[:QUERY_WORDS] or spec.name.replace("_", " ").split()
    return " ".join(words)


def _verdict(a: ToolSpec, b: ToolSpec, lost: list[str], checked: bool) -> tuple[Severity, str]:
    if not checked:
        return "warning", "retriever not asked (too many pairs)"
    if not lost:
        return "warning", "the retriever still ranks each first for its own description"
    other = {a.name: b.name, b.name: a.name}
    said = "; ".join(f"{x}'s description ranks {other[x]} first" for x in lost)
    both = len(lost) == 2 or a.description.strip() == b.description.strip()
    return ("error" if both else "warning"), f"retriever confuses them: {said}"


def finding(tools: Sequence[ToolSpec], pair: Pair, lost: list[str], checked: bool) -> Finding:
    """The finding for one pair; ``lost`` holds the tools whose own query ranked the other first.

    The tools column lists the lost ones first: those are the ones the retriever cannot tell
    apart from their twin.
    """
    a, b = tools[pair.a], tools[pair.b]
    severity, said = _verdict(a, b, lost, checked)
    names = (*lost, *(n for n in (a.name, b.name) if n not in lost))
    return Finding(
        KIND,
        severity,
        names,
        f"cosine {pair.cosine:.2f} (z {pair.z:.1f} over the catalog), name similarity "
        f"{pair.name:.2f}; {said}",
        "merge them, or say in each description what sets it apart and when to use which",
    )


def duplicate_findings(
    tools: Sequence[ToolSpec], vectors: Matrix, ranker: Ranker | None, rows: Any = None
) -> list[Finding]:
    """Near-duplicate findings; ``ranker`` (query -> top tool) names the confused side."""
    found = []
    spans = bundle_spans(tools)
    for n, pair in enumerate(pairs(tools, vectors, rows)):
        checked = ranker is not None and n < MAX_CHECKED
        lost = []
        for x, y in ((pair.a, pair.b), (pair.b, pair.a)):
            if (
                checked
                and ranker is not None
                and ranker(query_text(tools[x], spans)) == tools[y].name
            ):
                lost.append(tools[x].name)
        found.append(finding(tools, pair, lost, checked))
    return found


class _Known:
    """An embedder that answers document texts from vectors already computed (one pass only)."""

    def __init__(self, inner: Any, texts: Sequence[str], vectors: Matrix) -> None:
        self.inner = inner
        self.known = dict(zip(texts, vectors, strict=True))

    def embed(self, texts: Sequence[str], kind: str = "document") -> Any:
        if kind == "document" and all(t in self.known for t in texts):
            return [self.known[t] for t in texts]
        return self.inner.embed(texts, kind)


def ranker(tools: Sequence[ToolSpec], vectors: Matrix, embedder: Any) -> Ranker:
    """query -> the tool tooltray's hybrid index ranks first (the index is built on first use)."""
    texts = [doc_text(spec) for spec in tools]

    @cache
    def index() -> ToolIndex:
        return ToolIndex(tools, _Known(embedder, texts, vectors))

    def top(query: str) -> str | None:
        hits = index().search(query, k=1)
        return hits[0].name if hits else None

    return top


def distinct(tools: Sequence[ToolSpec]) -> list[ToolSpec]:
    """The tools without any later one whose match key (name without prefix) an earlier has."""
    owners: set[str] = set()
    kept = []
    for spec in tools:
        if match_key(spec.name) not in owners:
            owners.add(match_key(spec.name))
            kept.append(spec)
    return kept


def check_registered(new: Sequence[str], tools: Sequence[ToolSpec], embedder: Any) -> list[Finding]:
    """Near-duplicate findings between the newly registered tools ``new`` and all ``tools``.

    Run when tools join at run time (the instance layer, an MCP server connecting); pass an
    embedder with a cache so the catalog's vectors are not computed again.
    """
    kept = distinct(tools)
    rows = [i for i, spec in enumerate(kept) if spec.name in set(new)]
    if not rows or len(kept) < 3:
        return []
    vectors = unit_vectors(kept, embedder)
    return duplicate_findings(kept, vectors, ranker(kept, vectors, embedder), rows)
