"""One :class:`Changes` as one transaction: lock the session, then unloads, loads, uses, events.

The rules mirror :func:`tooltray.memory.core.session.apply_local`: the turn counter only moves
forward, a load appends after the last position (existing tools never move), a real load upgrades a
fallback load in place, and a use raises ``last_used_turn`` to the max. Every step writes history.
A change whose guard finds it already made (see :class:`Changes`) writes nothing but its
document vectors (the embedding cache).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, delete, insert, select, update

from tooltray.memory.store.learned import learn_turn
from tooltray.memory.store.models import utcnow
from tooltray.memory.store.queries import HISTORY, LOADED, SESSIONS, TURNS, read_loaded, upsert
from tooltray.memory.store.records import Changes, SessionMeta, SessionSnapshot, as_meta


@dataclass
class _Row:
    position: int
    fallback: bool
    last_used_turn: int | None


def apply_changes(conn: Connection, session_id: str, changes: Changes) -> SessionSnapshot:
    """Apply ``changes`` to ``session_id`` inside the caller's (write) transaction."""
    now = utcnow()
    if changes.vectors:
        from tooltray.memory.store.embeddings import write_embeddings  # numpy: only when needed

        for embedder_id, vectors in changes.vectors.items():
            write_embeddings(conn, embedder_id, vectors)
    session, existed = _lock_session(conn, session_id, now)
    if changes.skipped(as_meta(session.meta), existed):
        return _stored(conn, session_id, session)
    rows = _loaded_rows(conn, session_id)
    history: list[dict[str, Any]] = []
    turn = max(session.turn, changes.turn or 0)
    _unload(conn, session_id, turn, changes, rows, history)
    _load(conn, session_id, changes, rows, history)
    _use(conn, session_id, changes, rows, history)
    history += [_event_row(session_id, e.turn, e.kind, e, e.at) for e in changes.events]
    if history:
        for row in history:
            row["at"] = row["at"] or now
        conn.execute(insert(HISTORY), history)
    if changes.turn_record is not None:
        _record_turn(conn, session_id, changes, now)
    if changes.learn is not None:
        learn_turn(conn, session_id, changes.learn)
    if changes.usage is not None:
        where = (TURNS.c.session_id == session_id) & (TURNS.c.turn == changes.usage.turn)
        conn.execute(update(TURNS).where(where).values(**changes.usage.values()))
    return _update_session(conn, session_id, session, changes, now)


def _lock_session(conn: Connection, session_id: str, now: datetime) -> tuple[Any, bool]:
    """Lock the session's row, creating it if absent; also say whether it existed before.

    The insert is ``ON CONFLICT DO NOTHING``, so of several processes creating one session at
    once exactly one creates it (the others wait for it, then see its row as existing).
    """
    s = SESSIONS.c
    query = select(s.turn, s.status, s.meta, s.created_at, s.updated_at).where(s.id == session_id)
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = conn.execute(query).first()
    if row is not None:
        return row, True
    created = _insert_session(conn, session_id, now)
    return conn.execute(query).first(), not created


def _insert_session(conn: Connection, session_id: str, now: datetime) -> bool:
    """Insert the session's row unless it exists; True when this transaction created it.

    psycopg reports no row count for ``ON CONFLICT DO NOTHING``, so PostgreSQL asks for the new
    id back; SQLite's row count is exact (and ``RETURNING`` needs SQLite 3.35).
    """
    values = {"id": session_id, "turn": 0, "status": "active", "meta": {}}
    stmt = upsert(conn, SESSIONS).values(**values, created_at=now, updated_at=now)
    stmt = stmt.on_conflict_do_nothing(index_elements=["id"])
    if conn.dialect.name == "postgresql":
        return conn.execute(stmt.returning(SESSIONS.c.id)).first() is not None
    return bool(conn.execute(stmt).rowcount == 1)


def _stored(conn: Connection, sid: str, session: Any) -> SessionSnapshot:
    """The session as stored, for a change its guard skipped."""
    meta = as_meta(session.meta)
    loaded = read_loaded(conn, sid)
    return SessionSnapshot(
        sid, session.turn, session.status, loaded, meta, session.created_at, session.updated_at
    )


def _loaded_rows(conn: Connection, session_id: str) -> dict[str, _Row]:
    query = select(LOADED.c.name, LOADED.c.position, LOADED.c.fallback, LOADED.c.last_used_turn)
    result = conn.execute(query.where(LOADED.c.session_id == session_id))
    return {r.name: _Row(r.position, bool(r.fallback), r.last_used_turn) for r in result}


def _event_row(
    session_id: str, turn: int, kind: str, ev: Any, at: datetime | None
) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "turn": turn,
        "kind": kind,
        "tool": getattr(ev, "tool", None),
        "source": getattr(ev, "source", None),
        "score": getattr(ev, "score", None),
        "detail": getattr(ev, "detail", None),
        "at": at,
    }


def _unload(
    conn: Connection,
    sid: str,
    turn: int,
    changes: Changes,
    rows: dict[str, _Row],
    out: list[dict[str, Any]],
) -> None:
    gone: dict[str, str] = {}
    for unload in changes.unloads:
        if unload.name in rows and unload.name not in gone:
            gone[unload.name] = unload.kind
    if not gone:
        return
    where = (LOADED.c.session_id == sid) & LOADED.c.name.in_(list(gone))
    conn.execute(delete(LOADED).where(where))
    for name, kind in gone.items():
        del rows[name]
        out.append(_hist(sid, turn, kind, name))


def _hist(sid: str, turn: int, kind: str, tool: str, **extra: Any) -> dict[str, Any]:
    row = {"session_id": sid, "turn": turn, "kind": kind, "tool": tool}
    row.update({"source": None, "score": None, "detail": None, "at": None})
    row.update(extra)
    return row


def _load(
    conn: Connection, sid: str, changes: Changes, rows: dict[str, _Row], out: list[dict[str, Any]]
) -> None:
    next_pos = max((r.position for r in rows.values()), default=-1) + 1
    new: list[dict[str, Any]] = []
    for load in changes.loads:
        kind = "fallback" if load.fallback else "loaded"
        extra = {"source": load.source, "score": load.score}
        existing = rows.get(load.name)
        if existing is None:
            rows[load.name] = _Row(next_pos, load.fallback, None)
            new.append(_loaded_row(sid, load, next_pos))
            next_pos += 1
        elif existing.fallback and not load.fallback:
            existing.fallback = False
            where = (LOADED.c.session_id == sid) & (LOADED.c.name == load.name)
            values = {"fallback": False, "source": load.source, "score": load.score}
            conn.execute(update(LOADED).where(where).values(**values))
        else:
            continue
        out.append(_hist(sid, load.turn, kind, load.name, **extra))
    if new:
        conn.execute(insert(LOADED), new)


def _loaded_row(sid: str, load: Any, position: int) -> dict[str, Any]:
    return {
        "session_id": sid,
        "name": load.name,
        "position": position,
        "loaded_turn": load.turn,
        "last_used_turn": None,
        "source": load.source,
        "score": load.score,
        "fallback": load.fallback,
    }


def _use(
    conn: Connection, sid: str, changes: Changes, rows: dict[str, _Row], out: list[dict[str, Any]]
) -> None:
    latest: dict[str, int] = {}
    for use in changes.uses:
        out.append(_hist(sid, use.turn, "used", use.name))
        latest[use.name] = max(use.turn, latest.get(use.name, use.turn))
    raised = [
        {"sid": sid, "n": name, "t": turn}
        for name, turn in latest.items()
        if name in rows and turn > _or_minus_one(rows[name].last_used_turn)
    ]
    if raised:
        where = (LOADED.c.session_id == bindparam("sid")) & (LOADED.c.name == bindparam("n"))
        stmt = update(LOADED).where(where).values(last_used_turn=bindparam("t"))
        conn.execute(stmt, raised)


def _or_minus_one(turn: int | None) -> int:
    return -1 if turn is None else turn


def _record_turn(conn: Connection, sid: str, changes: Changes, now: datetime) -> None:
    rec = changes.turn_record
    assert rec is not None
    values = {
        "session_id": sid,
        "turn": rec.turn,
        "prefix_hash": rec.prefix_hash,
        "tool_tokens": rec.tool_tokens,
        "loaded_count": rec.loaded_count,
        "eager_tokens": rec.eager_tokens,
        "at": rec.at or now,
    }
    stmt = upsert(conn, TURNS).values(**values)
    keep = ("prefix_hash", "tool_tokens", "loaded_count", "eager_tokens", "at")
    stmt = stmt.on_conflict_do_update(
        index_elements=["session_id", "turn"], set_={k: stmt.excluded[k] for k in keep}
    )
    conn.execute(stmt)


def _update_session(
    conn: Connection, sid: str, session: Any, changes: Changes, now: datetime
) -> SessionSnapshot:
    turn = max(session.turn, changes.turn or 0)
    status = changes.status or session.status
    meta: SessionMeta = {**as_meta(session.meta), **(changes.meta or {})}
    values = {"turn": turn, "status": status, "meta": meta, "updated_at": now}
    conn.execute(update(SESSIONS).where(SESSIONS.c.id == sid).values(**values))
    loaded = read_loaded(conn, sid)
    return SessionSnapshot(sid, turn, status, loaded, meta, session.created_at, now)
