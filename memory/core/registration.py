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

from tooltray.memory.config import Settings
from tooltray.memory.retrieval.twins import check_registered
from tooltray.memory.store.base import BaseStore
from tooltray.memory.store.records import HistoryEvent
from tooltray.tools.errors import TooltrayError
from tooltray.tools.finding import Finding
from tooltray.tools.registry import ToolRegistry
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


def near_duplicates(
    new: Sequence[str], registry: ToolRegistry, settings: Settings, store: BaseStore
) -> list[Finding]:
    """Findings for tools just registered against every allowed tool (vectors cached in store)."""
    from tooltray.memory.retrieval.selector import make_embedder

    return registration_warnings(new, registry.allowed(), make_embedder(settings, store))


def as_events(session_id: str, turn: int, found: Sequence[Finding]) -> list[HistoryEvent]:
    """The ``near-duplicate`` history rows a session records for ``found``."""
    return [
        HistoryEvent(session_id, turn, "near-duplicate", f.tools[0], detail=f.evidence[:500])
        for f in found
    ]
