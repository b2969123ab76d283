"""Run every lint check over one catalog: the CLI's ``catalog lint`` and the registration check.

Everything here is a pure function of the tools, their bundles and an embedder passed in; no
client, store or settings. Without an embedder the near-duplicate check is skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from tooltray.memory.lint.boilerplate import boilerplate_findings
from tooltray.memory.lint.descriptions import description_findings
from tooltray.memory.lint.duplicates import Ranker, duplicate_findings
from tooltray.memory.lint.finding import SEVERITIES, Finding
from tooltray.memory.lint.names import dedupe
from tooltray.memory.lint.params import parameter_findings
from tooltray.memory.lint.similarity import Matrix, unit_vectors
from tooltray.memory.lint.size import size_findings
from tooltray.memory.retrieval.index import ToolIndex
from tooltray.memory.retrieval.text import doc_text
from tooltray.tools.spec import ToolSpec

KINDS: tuple[str, ...] = (
    "line", "name", "schema", "near-duplicate", "boilerplate", "description", "parameter",
    "schema-size",
)  # fmt: skip


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


def ordered(findings: Sequence[Finding]) -> list[Finding]:
    """Errors first, then by kind (in :data:`KINDS` order), then by the first tool."""

    def key(f: Finding) -> tuple[int, int, str]:
        kind = KINDS.index(f.kind) if f.kind in KINDS else len(KINDS)
        return (-SEVERITIES.index(f.severity), kind, f.tools[0] if f.tools else "")

    return sorted(findings, key=key)


def lint(tools: Sequence[ToolSpec], embedder: Any = None) -> list[Finding]:
    """Every finding over ``tools`` (bundles come from ``ToolSpec.bundle``), ordered."""
    kept, found = dedupe(tools)
    found += description_findings(kept) + parameter_findings(kept)
    found += size_findings(kept) + boilerplate_findings(kept)
    if embedder is not None and len(kept) >= 3:
        vectors = unit_vectors(kept, embedder)
        found += duplicate_findings(kept, vectors, ranker(kept, vectors, embedder))
    return ordered(found)


def check_registered(new: Sequence[str], tools: Sequence[ToolSpec], embedder: Any) -> list[Finding]:
    """Near-duplicate findings between the newly registered tools ``new`` and all ``tools``.

    Run when tools join at run time (the instance layer, an MCP server connecting); pass an
    embedder with a cache so the catalog's vectors are not computed again.
    """
    kept, _ = dedupe(tools)
    rows = [i for i, spec in enumerate(kept) if spec.name in set(new)]
    if not rows or len(kept) < 3:
        return []
    vectors = unit_vectors(kept, embedder)
    return duplicate_findings(kept, vectors, ranker(kept, vectors, embedder), rows)
