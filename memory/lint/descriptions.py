"""Descriptions retrieval and the model cannot use: empty, very short, or the name restated.

The description is most of what BM25, the embedder and the model see of a tool; a tool whose
description says nothing beyond its name is found only when the user happens to use its words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tooltray.memory.retrieval.scoring import terms
from tooltray.tools.finding import Finding
from tooltray.tools.spec import ToolSpec

MIN_WORDS = 5
KIND = "description"


def _words(text: str) -> list[str]:
    return [w for w in text.split() if any(c.isalnum() for c in w)]


def check_description(spec: ToolSpec) -> Finding | None:
    """A finding for ``spec``'s description, or ``None`` when it is usable."""
    text = spec.description.strip()
    if not text:
        return Finding(
            KIND,
            "error",
            (spec.name,),
            "empty description",
            "write one sentence saying what the tool does and when to use it",
        )
    own = set(terms(text))
    if own and own <= set(terms(spec.name)):
        return Finding(
            KIND,
            "warning",
            (spec.name,),
            f"name only: {text[:80]!r}",
            "say what the tool does beyond its name: inputs, result, when to use it",
        )
    count = len(_words(text))
    if count < MIN_WORDS:
        return Finding(
            KIND,
            "warning",
            (spec.name,),
            f"very short ({count} words): {text[:80]!r}",
            f"describe it in at least {MIN_WORDS} words: what it does, what it returns",
        )
    return None


def description_findings(tools: Sequence[ToolSpec]) -> list[Finding]:
    """One finding per tool whose description is empty, name-only or very short."""
    found: Iterable[Finding | None] = (check_description(spec) for spec in tools)
    return [f for f in found if f is not None]
