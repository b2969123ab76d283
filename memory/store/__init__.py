"""Durable state for tooltray: sessions, loaded sets, history, turns, embeddings and results.

One :class:`Store` over a SQLAlchemy URL (SQLite file or PostgreSQL), schema managed by Alembic.
"""

from tooltray.memory.store.engine import make_engine, readonly_engine, resolve_url
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
)
from tooltray.memory.store.store import Store

__all__ = [
    "Changes",
    "HistoryEvent",
    "Load",
    "LoadedTool",
    "SessionInfo",
    "SessionSnapshot",
    "Store",
    "TurnRecord",
    "Unload",
    "Use",
    "check",
    "current",
    "head",
    "make_engine",
    "readonly_engine",
    "resolve_url",
    "upgrade",
]
