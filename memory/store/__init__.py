"""Durable state for tooltray: sessions, loaded sets, history, turns, embeddings and results.

:class:`BaseStore` is the protocol; :class:`Store` implements it over a SQLAlchemy URL (SQLite
file or PostgreSQL, schema managed by Alembic) and :class:`MemoryStore` in this process only.

The exports load on first use: ``tooltray sql``, ``tooltray history`` and ``tooltray db current``
read a SQLite store with the stdlib (:mod:`~tooltray.memory.store.url`) and must not pay for
SQLAlchemy, Alembic or numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooltray.tools.lazy import lazy_exports

if TYPE_CHECKING:
    from tooltray.memory.store.base import BaseStore
    from tooltray.memory.store.engine import make_engine
    from tooltray.memory.store.memory import MemoryStore
    from tooltray.memory.store.migrate import check, current, head, upgrade
    from tooltray.memory.store.records import (
        Changes,
        HistoryEvent,
        Load,
        LoadedTool,
        SessionInfo,
        SessionSnapshot,
        TurnRecord,
        Unload,
        Use,
        apply_local,
        empty_snapshot,
    )
    from tooltray.memory.store.store import Store
    from tooltray.memory.store.url import resolve_url

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        ".base": ("BaseStore",),
        ".engine": ("make_engine",),
        ".memory": ("MemoryStore",),
        ".migrate": ("check", "current", "head", "upgrade"),
        ".records": (
            "Changes",
            "HistoryEvent",
            "Load",
            "LoadedTool",
            "SessionInfo",
            "SessionSnapshot",
            "TurnRecord",
            "Unload",
            "Use",
            "apply_local",
            "empty_snapshot",
        ),
        ".store": ("Store",),
        ".url": ("resolve_url",),
    },
)

__all__ = [
    "BaseStore",
    "Changes",
    "HistoryEvent",
    "Load",
    "LoadedTool",
    "MemoryStore",
    "SessionInfo",
    "SessionSnapshot",
    "Store",
    "TurnRecord",
    "Unload",
    "Use",
    "apply_local",
    "check",
    "current",
    "empty_snapshot",
    "head",
    "make_engine",
    "resolve_url",
    "upgrade",
]
