"""Boilerplate: a span most of a bundle's descriptions repeat, and the tokens it costs.

The span finder lives in :mod:`tooltray.tools.render` (the renderer's ``boilerplate_once``
option uses it too); this check reports each span with what repeating it costs.
"""

from __future__ import annotations

from collections.abc import Sequence

from tooltray.tools.finding import Finding
from tooltray.tools.render import bundle_spans, count_tokens, members
from tooltray.tools.spec import ToolSpec

KIND = "boilerplate"


def _quote(span: str, limit: int = 90) -> str:
    return repr(span if len(span) <= limit else span[: limit - 1] + "…")


def boilerplate_findings(tools: Sequence[ToolSpec]) -> list[Finding]:
    """One warning per shared span per bundle, with its token cost across the bundle."""
    found = []
    for bundle, spans in bundle_spans(tools).items():
        group = [t for t in tools if t.bundle == bundle]
        texts = [" ".join(t.description.split()) for t in group]
        for span in spans:
            holders = tuple(t.name for t, text in zip(group, texts, strict=True) if span in text)
            each = count_tokens(span).n
            found.append(
                Finding(
                    KIND,
                    "warning",
                    holders,
                    f"bundle {bundle}: {_quote(span)} ({each} tokens) in "
                    f"{members(span, texts)} of {len(group)} descriptions: "
                    f"{each * len(holders):,} tokens, {each * (len(holders) - 1):,} of them "
                    "repeated",
                    "state it once in the bundle description and cut it from each tool (or "
                    "set boilerplate_once = true)",
                )
            )
    return found
