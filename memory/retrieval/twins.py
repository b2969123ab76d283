"""Near-duplicate tools: exact twins always, near twins where the retriever confuses them.

It is retrieval's own concern (two tools it cannot tell apart), run by ``catalog lint`` and, for
tools registered while an agent runs, by the trinket (:mod:`~tooltray.memory.core.registration`).

One rule for 7 tools and for 4,000. Two tools with the same description and parameters (case
and spacing aside) are twins whatever the catalog. Any other pair is a candidate when its cosine
stands out from the catalog's pairs (``TWIN_STRONG_Z`` deviations above the mean, or
``TWIN_PAIR_Z`` with a high cosine or similar names) or is high outright (``TWIN_HIGH_COSINE``,
for catalogs too small to have a distribution), and is reported only when the retriever confuses
it: a query made of one tool's description ranks the other first (with tooltray's own index).
A z-score alone flags thousands of merely related pairs on 2-4k-tool catalogs;
``bench/README.md`` has the counts, and :mod:`tooltray.memory.tuning` the values.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from tooltray.memory.retrieval.index import ToolIndex
from tooltray.memory.retrieval.scoring import doc_text
from tooltray.memory.retrieval.similarity import (
    Matrix,
    close_pairs,
    cosine_stats,
    name_similarity,
    unit_vectors,
)
from tooltray.memory.tuning import (
    TWIN_HIGH_COSINE,
    TWIN_PAIR_Z,
    TWIN_QUERY_WORDS,
    TWIN_SIMILAR_NAME,
    TWIN_STRONG_Z,
)
from tooltray.tools.finding import Finding, Severity
from tooltray.tools.names import clash_key
from tooltray.tools.render import bundle_spans, strip_spans
from tooltray.tools.spec import ToolSpec

KIND = "near-duplicate"

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
    """A candidate pair (the retriever still has to confuse it; see the module docstring)."""
    if cosine >= TWIN_HIGH_COSINE:
        return True
    return z >= TWIN_STRONG_Z or (z >= TWIN_PAIR_Z and name >= TWIN_SIMILAR_NAME)


def pairs(
    tools: Sequence[ToolSpec], vectors: Matrix, rows: Sequence[int] | None = None
) -> list[Pair]:
    """Candidate pairs, most alike first (only pairs touching ``rows`` when given)."""
    mean, std = cosine_stats(vectors)
    out = []
    for i, j, cos in close_pairs(vectors, min(mean + TWIN_PAIR_Z * std, TWIN_HIGH_COSINE), rows):
        z = (cos - mean) / std
        name = name_similarity(tools[i].name, tools[j].name)
        if flagged(cos, z, name):
            out.append(Pair(i, j, cos, z, name))
    return sorted(out, key=lambda p: -p.z)


def twin_key(spec: ToolSpec) -> str:
    """What two exact twins share: the description without case or spacing, and the schema."""
    described = " ".join(spec.description.lower().split())
    return described + "\0" + json.dumps(spec.parameters or {}, sort_keys=True)


def exact_twins(tools: Sequence[ToolSpec], rows: Sequence[int] | None = None) -> list[list[int]]:
    """Groups of tools with the same :func:`twin_key` (only groups touching ``rows`` when
    given); an empty description is the description check's finding, not a twin."""
    groups: dict[str, list[int]] = {}
    for i, spec in enumerate(tools):
        if spec.description.strip():
            groups.setdefault(twin_key(spec), []).append(i)
    wanted = set(range(len(tools)) if rows is None else rows)
    return [g for g in groups.values() if len(g) > 1 and wanted.intersection(g)]


def twin_finding(tools: Sequence[ToolSpec], group: Sequence[int]) -> Finding:
    """One finding for a group of exact twins (however many share the description)."""
    return Finding(
        KIND,
        "error",
        tuple(tools[i].name for i in group),
        f"{len(group)} tools with the same description and parameters: neither the retriever "
        "nor the model can tell them apart",
        "merge them, or say in each description what sets it apart and when to use which",
    )


def query_text(spec: ToolSpec, spans: dict[str, list[str]]) -> str:
    """A request made of the tool's own description, its bundle's boilerplate cut out."""
    text = strip_spans(spec.description, spans.get(spec.bundle or "", []))
    words = text.split()[:TWIN_QUERY_WORDS] or spec.name.replace("_", " ").split()
    return " ".join(words)


def _verdict(a: ToolSpec, b: ToolSpec, lost: list[str]) -> tuple[Severity, str]:
    other = {a.name: b.name, b.name: a.name}
    said = "; ".join(f"{x}'s description ranks {other[x]} first" for x in lost)
    return ("error" if len(lost) == 2 else "warning"), f"retriever confuses them: {said}"


def finding(tools: Sequence[ToolSpec], pair: Pair, lost: list[str]) -> Finding:
    """The finding for one pair; ``lost`` holds the tools whose own query ranked the other first.

    The tools column lists the lost ones first: those are the ones the retriever cannot tell
    apart from their twin.
    """
    a, b = tools[pair.a], tools[pair.b]
    severity, said = _verdict(a, b, lost)
    names = (*lost, *(n for n in (a.name, b.name) if n not in lost))
    return Finding(
        KIND,
        severity,
        names,
        f"cosine {pair.cosine:.2f} (z {pair.z:.1f} over the catalog), name similarity "
        f"{pair.name:.2f}; {said}",
        "merge them, or say in each description what sets it apart and when to use which",
    )


def confused(tools: Sequence[ToolSpec], pair: Pair, ranker: Ranker, spans: Any) -> list[str]:
    """The tools of ``pair`` whose own description's query ranks the other first."""
    return [
        tools[x].name
        for x, y in ((pair.a, pair.b), (pair.b, pair.a))
        if ranker(query_text(tools[x], spans)) == tools[y].name
    ]


def duplicate_findings(
    tools: Sequence[ToolSpec], vectors: Matrix | None, ranker: Ranker | None, rows: Any = None
) -> list[Finding]:
    """Exact twins, then candidate pairs the retriever confuses (``ranker``: query -> top
    tool); without vectors or a ranker, exact twins only."""
    exact = exact_twins(tools, rows)
    found = [twin_finding(tools, group) for group in exact]
    if vectors is None or ranker is None or len(tools) < 3:
        return found
    twin_of = {i: n for n, group in enumerate(exact) for i in group}
    spans = bundle_spans(tools)
    for pair in pairs(tools, vectors, rows):
        same = pair.a in twin_of and twin_of.get(pair.a) == twin_of.get(pair.b)
        lost = [] if same else confused(tools, pair, ranker, spans)
        if lost:
            found.append(finding(tools, pair, lost))
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

    @cache
    def top(query: str) -> str | None:
        hits = index().search(query, k=1)
        return hits[0].name if hits else None

    return top


def distinct(tools: Sequence[ToolSpec]) -> list[ToolSpec]:
    """The tools without any later one the registry would refuse as a clash (its clash key)."""
    owners: set[str] = set()
    kept = []
    for spec in tools:
        if clash_key(spec.name) not in owners:
            owners.add(clash_key(spec.name))
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
        return duplicate_findings(kept, None, None, rows) if rows else []
    vectors = unit_vectors(kept, embedder)
    return duplicate_findings(kept, vectors, ranker(kept, vectors, embedder), rows)
