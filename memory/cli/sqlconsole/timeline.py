"""A session's history and turns read straight from a SQLite file, with the stdlib only.

``tooltray history`` on a SQLite store reads here instead of through the
:class:`~tooltray.memory.store.store.Store`, whose SQLAlchemy costs more CPU than the whole
command may take. The records are the store's own, timestamps included: a ``DateTime`` column
holds ``YYYY-MM-DD HH:MM:SS.ffffff`` in UTC on SQLite, which comes back timezone-aware exactly as
:class:`~tooltray.memory.store.tables.UTCDateTime` returns it (a test compares both readings).
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

from tooltray.memory.cli.sqlconsole.guard import open_readonly
from tooltray.memory.store.probe_file import first_line
from tooltray.memory.store.records import EventKind, HistoryEvent, Source, TurnRecord
from tooltray.tools.errors import StoreError

Timeline = tuple[list[HistoryEvent], list[TurnRecord]]

_SESSION = "SELECT 1 FROM sessions WHERE id = ?"
_HISTORY = (
    "SELECT session_id, turn, kind, tool, source, score, detail, at, id FROM history "
    "WHERE session_id = ? ORDER BY id"
)
_TURNS = (
    "SELECT session_id, turn, prefix_hash, tool_tokens, loaded_count, eager_tokens, at, "
    "prompt_reused, prompt_new, usage_cached, usage_uncached, usage_output "
    "FROM turns WHERE session_id = ? ORDER BY turn"
)


def read_timeline(path: Path, session_id: str) -> Timeline | None:
    """The history and turns of ``session_id`` in the file at ``path`` (``None``: no session).

    Raises:
        StoreError: the file cannot be read (one line, as the store would say it).
    """
    try:
        connection = open_readonly(path)
        try:
            return _read(connection, session_id)
        finally:
            connection.close()
    except sqlite3.Error as exc:
        raise StoreError(
            f"could not read the history of {session_id!r}: {first_line(exc)}"
        ) from exc
    except (UnicodeError, ValueError) as exc:
        raise StoreError(
            f"could not read the history of {session_id!r}: a stored value is damaged "
            f"({type(exc).__name__}: {str(exc)[:120]}); move the database aside or restore a backup"
        ) from exc


def _read(connection: sqlite3.Connection, session_id: str) -> Timeline | None:
    if connection.execute(_SESSION, (session_id,)).fetchone() is None:
        return None
    events = [_event(row) for row in connection.execute(_HISTORY, (session_id,))]
    turns = [_turn(row) for row in connection.execute(_TURNS, (session_id,))]
    return events, turns


def _event(row: Any) -> HistoryEvent:
    session_id, turn, kind, tool, source, score, detail, at, event_id = row
    kind, source = cast(EventKind, kind), cast(Source | None, source)
    return HistoryEvent(session_id, turn, kind, tool, source, score, detail, utc(at), event_id)


def _turn(row: Any) -> TurnRecord:
    session_id, turn, prefix_hash, tool_tokens, loaded_count, eager_tokens, at, *usage = row
    return TurnRecord(
        session_id, turn, prefix_hash, tool_tokens, loaded_count, eager_tokens, utc(at), *usage
    )


def utc(value: str | None) -> datetime | None:
    """A stored SQLite timestamp as a timezone-aware UTC ``datetime`` (``None`` stays ``None``)."""
    if value is None:
        return None
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)
