"""Reads of the store as plain records; each runs inside the caller's connection/transaction.

:func:`read_snapshot` touches only ``sessions`` and ``loaded_tools`` (by primary key), so it stays
fast however long a session's history grows.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Table, func, select

from tooltray.memory.store.models import Base
from tooltray.memory.store.records import (
    HistoryEvent,
    LoadedTool,
    SessionInfo,
    SessionSnapshot,
    TurnRecord,
    as_meta,
)

SESSIONS: Table = Base.metadata.tables["sessions"]
LOADED: Table = Base.metadata.tables["loaded_tools"]
HISTORY: Table = Base.metadata.tables["history"]
TURNS: Table = Base.metadata.tables["turns"]
EMBEDDINGS: Table = Base.metadata.tables["embeddings"]
RESULTS: Table = Base.metadata.tables["results"]


def upsert(conn: Connection, table: Table) -> Any:
    """The dialect's ``INSERT`` that supports ``ON CONFLICT`` (SQLite and PostgreSQL alike).

    The dialect module loads here, once a write needs it: a SQLite store never loads PostgreSQL's.
    """
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table)
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table)


def read_loaded(conn: Connection, session_id: str) -> tuple[LoadedTool, ...]:
    """The loaded set of ``session_id`` in position (``tools=``) order."""
    cols = LOADED.c
    query = select(
        cols.name,
        cols.position,
        cols.loaded_turn,
        cols.last_used_turn,
        cols.source,
        cols.score,
        cols.fallback,
    )
    query = query.where(cols.session_id == session_id).order_by(cols.position)
    return tuple(
        LoadedTool(r[0], r[1], r[2], r[3], r[4], r[5], bool(r[6])) for r in conn.execute(query)
    )


def read_snapshot(conn: Connection, session_id: str) -> SessionSnapshot | None:
    """The stored session, or ``None`` if it was never written."""
    cols = SESSIONS.c
    query = select(cols.turn, cols.status, cols.meta, cols.created_at, cols.updated_at)
    row = conn.execute(query.where(cols.id == session_id)).first()
    if row is None:
        return None
    loaded = read_loaded(conn, session_id)
    return SessionSnapshot(
        session_id,
        row.turn,
        row.status,
        loaded,
        as_meta(row.meta),
        row.created_at,
        row.updated_at,
    )


def read_history(conn: Connection, session_id: str, since_id: int | None) -> list[HistoryEvent]:
    """History rows of ``session_id`` in write order, only those after ``since_id`` if given."""
    c = HISTORY.c
    query = select(HISTORY).where(c.session_id == session_id)
    if since_id is not None:
        query = query.where(c.id > since_id)
    return [
        HistoryEvent(r.session_id, r.turn, r.kind, r.tool, r.source, r.score, r.detail, r.at, r.id)
        for r in conn.execute(query.order_by(c.id))
    ]


def read_turns(conn: Connection, session_id: str) -> list[TurnRecord]:
    """Turn records of ``session_id`` in turn order."""
    c = TURNS.c
    query = select(TURNS).where(c.session_id == session_id).order_by(c.turn)
    return [
        TurnRecord(
            r.session_id,
            r.turn,
            r.prefix_hash,
            r.tool_tokens,
            r.loaded_count,
            r.eager_tokens,
            r.at,
            r.prompt_reused,
            r.prompt_new,
            r.usage_cached,
            r.usage_uncached,
            r.usage_output,
        )
        for r in conn.execute(query)
    ]


def read_sessions(conn: Connection) -> list[SessionInfo]:
    """Every session with its loaded-tool count, most recently updated first."""
    s, lt = SESSIONS.c, LOADED.c
    count = select(func.count()).select_from(LOADED).where(lt.session_id == s.id).scalar_subquery()
    query = select(s.id, s.turn, s.status, count, s.created_at, s.updated_at)
    query = query.order_by(s.updated_at.desc(), s.id)
    return [SessionInfo(r[0], r[1], r[2], r[3], r[4], r[5]) for r in conn.execute(query)]
