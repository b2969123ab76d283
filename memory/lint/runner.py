"""Run every lint check over one catalog: the CLI's ``catalog lint``.

Everything here is a pure function of the tools, their bundles and an embedder passed in; no
client, store or settings. Without an embedder the near-duplicate check finds exact twins only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tooltray.memory.lint.boilerplate import boilerplate_findings
from tooltray.memory.lint.descriptions import description_findings
from tooltray.memory.lint.names import dedupe
from tooltray.memory.lint.params import parameter_findings
from tooltray.memory.lint.size import size_findings
from tooltray.memory.retrieval.similarity import unit_vectors
from tooltray.memory.retrieval.twins import duplicate_findings, ranker
from tooltray.tools.finding import SEVERITIES, Finding
from tooltray.tools.spec import ToolSpec

KINDS: tuple[str, ...] = (
    "line", "name", "schema", "near-duplicate", "boilerplate", "description", "parameter",
    "schema-size",
)  # fmt: skip


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
    if embedder is None or len(kept) < 3:
        found += duplicate_findings(kept, None, None)  # exact twins need no embedder
    else:
        vectors = unit_vectors(kept, embedder)
        found += duplicate_findings(kept, vectors, ranker(kept, vectors, embedder))
    return ordered(found)
