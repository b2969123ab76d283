"""The near-duplicate check for tools registered at run time: a log warning, never a refusal.

A tool registered while the agent runs (the instance layer, an MCP server connecting) can
shadow a catalog tool for the retriever just as a catalog twin can. The check is the one
``catalog lint`` runs, limited to pairs touching the new tools; it logs and returns findings,
and any failure of its own (embedder down, say) is logged and swallowed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from tooltray.memory.lint.finding import Finding
from tooltray.memory.lint.runner import check_registered
from tooltray.tools.errors import TooltrayError
from tooltray.tools.spec import ToolSpec

log = logging.getLogger("tooltray")


def registration_warnings(
    new: Sequence[str], tools: Sequence[ToolSpec], embedder: Any
) -> list[Finding]:
    """Near-duplicate findings for ``new`` against ``tools``, each logged as a warning."""
    try:
        found = check_registered(new, tools, embedder)
    except (TooltrayError, ValueError, RuntimeError) as exc:
        log.warning("tooltray: near-duplicate check of %s skipped: %s", ", ".join(new), exc)
        return []
    for finding in found:
        log.warning(
            "tooltray: registered tool %s is a near duplicate of %s: %s",
            finding.tools[0],
            ", ".join(finding.tools[1:]),
            finding.evidence,
        )
    return found
