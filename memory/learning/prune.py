"""Drop old raw history (``history`` and ``turns`` rows) while keeping what was learned.

The learned tables never read the raw history back (a turn's co-use partner is found in
``learn_requests``), so pruning costs the timeline of old turns and nothing selection uses.
Sessions and their loaded sets stay: a live session keeps working after a prune.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import Engine, delete

from tooltray.memory.store.engine import IMMEDIATE
from tooltray.memory.store.queries import HISTORY, TURNS


@dataclass(frozen=True)
class PruneReport:
    """How many rows a prune removed."""

    history: int
    turns: int


def prune_history(engine: Engine, before: datetime) -> PruneReport:
    """Delete ``history`` and ``turns`` rows written before ``before`` in one transaction."""
    if before.tzinfo is None:
        before = before.replace(tzinfo=timezone.utc)
    with engine.execution_options(**{IMMEDIATE: True}).begin() as conn:
        history = conn.execute(delete(HISTORY).where(HISTORY.c.at < before)).rowcount
        turns = conn.execute(delete(TURNS).where(TURNS.c.at < before)).rowcount
    return PruneReport(int(history), int(turns))
