"""Drop old raw history (``history`` and ``turns`` rows) while keeping what was learned.

The learned tables never read the raw history back (a turn's co-use partner is found in
``learn_requests``), so pruning costs the timeline of old turns and nothing selection uses.
Sessions and their loaded sets stay: a live session keeps working after a prune. The rows go
through the store protocol (:meth:`~tooltray.memory.store.base.BaseStore.prune`).
"""

from __future__ import annotations

from datetime import datetime, timezone

from tooltray.memory.store.base import BaseStore
from tooltray.memory.store.records import PruneReport as PruneReport  # re-exported


def prune_history(store: BaseStore, before: datetime) -> PruneReport:
    """Delete ``history`` and ``turns`` rows written before ``before`` (naive: UTC)."""
    if before.tzinfo is None:
        before = before.replace(tzinfo=timezone.utc)
    return store.prune(before)
