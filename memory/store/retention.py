"""Retention: a store kept within an age and a size, every growing table included.

``history`` and ``turns`` rows were the only ones ever dropped, so sessions, their loaded sets,
stored results and cached vectors grew without bound, and the SQLite file never shrank. A
:class:`Policy` (the ``retain_days`` and ``retain_mb`` settings, or ``tooltray db prune``'s
options) now drops, oldest first:

* by age: sessions idle (not written) since the cutoff, with their loaded sets, history, turns
  and stored results; any other history, turn and result row older than it; cached vectors no
  index has looked up since it. A catalog is current while some process builds its index on
  this store (each build marks its tools' vectors used, at most daily), so this drops exactly
  the vectors of tools no current catalog has, and keeps a used vector however old it is;
* by size (SQLite): whole sessions, least recently written first, until the rows fit the limit;
  then, if they still do not, every cached vector (a cache: embedded again on next use).

The learned tables are bounded by their own settings (``learn_max_requests``,
``learn_max_pairs``) and kept. Then SQLite gives the space back: ``VACUUM`` and a truncating WAL
checkpoint. On PostgreSQL the rows go and autovacuum reuses their space (``VACUUM FULL`` would
shrink the files, under an exclusive lock: left to the operator).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, delete, func, select

from tooltray.memory.store.store import Store
from tooltray.memory.store.tables import (
    EMBEDDINGS,
    HISTORY,
    LOADED,
    RESULTS,
    SESSIONS,
    TURNS,
)
from tooltray.memory.store.url import sqlite_file

SIZE_STEP = 0.1
"""Share of the remaining sessions dropped per round while the store is over its size."""


@dataclass(frozen=True)
class Policy:
    """What to keep: rows written after ``before`` (``None``: any age) within ``max_bytes``
    (``None``: any size; SQLite only), and whether to give the space back."""

    before: datetime | None = None
    max_bytes: int | None = None
    vacuum: bool = True


@dataclass
class Dropped:
    """What a retention run removed, and the store's size before and after (SQLite, bytes)."""

    sessions: int = 0
    history: int = 0
    turns: int = 0
    results: int = 0
    embeddings: int = 0
    size_before: int | None = None
    size_after: int | None = None

    def add(self, other: Dropped) -> None:
        for name in ("sessions", "history", "turns", "results", "embeddings"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def apply_policy(store: Store, policy: Policy) -> Dropped:
    """Drop what ``policy`` does not keep, then give the space back (see the module)."""
    out = Dropped(size_before=file_bytes(store))
    if policy.before is not None:
        before = policy.before
        out.add(store._write("drop old rows", lambda conn: _by_age(conn, before)))
    if policy.max_bytes is not None and sqlite_file(store.url) is not None:
        out.add(_by_size(store, policy.max_bytes))
    if policy.vacuum:
        give_back(store)
    out.size_after = file_bytes(store)
    return out


def _by_age(conn: Connection, before: datetime) -> Dropped:
    idle = select(SESSIONS.c.id).where(SESSIONS.c.updated_at < before)
    out = _drop_sessions(conn, idle, before)
    stale = EMBEDDINGS.c.used_at < before
    out.embeddings = int(conn.execute(delete(EMBEDDINGS).where(stale)).rowcount)
    return out


def _drop_sessions(conn: Connection, ids: Any, before: datetime | None = None) -> Dropped:
    """Delete the sessions ``ids`` selects with every row of theirs (and, with ``before``,
    every history, turn and result row older than it), children first."""

    def rows(table: Any, at: Any) -> ColumnElement[bool]:
        owned: ColumnElement[bool] = table.c.session_id.in_(ids)
        return owned if before is None else owned | (at < before)

    out = Dropped()
    out.history = int(conn.execute(delete(HISTORY).where(rows(HISTORY, HISTORY.c.at))).rowcount)
    out.turns = int(conn.execute(delete(TURNS).where(rows(TURNS, TURNS.c.at))).rowcount)
    owned = rows(RESULTS, RESULTS.c.created_at)
    out.results = int(conn.execute(delete(RESULTS).where(owned)).rowcount)
    conn.execute(delete(LOADED).where(LOADED.c.session_id.in_(ids)))
    out.sessions = int(conn.execute(delete(SESSIONS).where(SESSIONS.c.id.in_(ids))).rowcount)
    return out


def _by_size(store: Store, max_bytes: int) -> Dropped:
    """Drop the least recently written sessions until the rows fit ``max_bytes``, then the
    cached vectors if they still do not (SQLite: its used pages measure the rows)."""
    out = Dropped()
    while used_bytes(store) > max_bytes:
        count = store._write("count sessions", _session_count)
        if count == 0:
            out.embeddings += store._write("drop cached vectors", _drop_vectors)
            break
        out.add(store._write("drop old sessions", _oldest(max(1, int(count * SIZE_STEP)))))
    return out


def _oldest(n: int) -> Callable[[Connection], Dropped]:
    """Drop the ``n`` least recently written sessions (one write)."""
    order = (SESSIONS.c.updated_at, SESSIONS.c.id)
    chunk = select(SESSIONS.c.id).order_by(*order).limit(n).subquery()
    return lambda conn: _drop_sessions(conn, select(chunk.c.id))


def _session_count(conn: Connection) -> int:
    return int(conn.execute(select(func.count()).select_from(SESSIONS)).scalar_one())


def _drop_vectors(conn: Connection) -> int:
    return int(conn.execute(delete(EMBEDDINGS)).rowcount)


def used_bytes(store: Store) -> int:
    """Bytes the rows take in a SQLite store: its pages less the free ones."""
    with store.engine.connect() as conn:
        pages = conn.exec_driver_sql("PRAGMA page_count").scalar_one()
        free = conn.exec_driver_sql("PRAGMA freelist_count").scalar_one()
        size = conn.exec_driver_sql("PRAGMA page_size").scalar_one()
    return int((pages - free) * size)


def file_bytes(store: Store) -> int | None:
    """The SQLite file's size with its WAL (``None``: not a SQLite file)."""
    path = sqlite_file(store.url)
    if path is None or not path.is_file():
        return None
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.is_file() else 0)


def give_back(store: Store) -> None:
    """Return freed pages to the file system (SQLite ``VACUUM``, then an emptied WAL)."""
    if sqlite_file(store.url) is None:
        return
    raw = store.engine.raw_connection()  # outside SQLAlchemy's transaction: VACUUM needs none
    try:
        driver: Any = raw.driver_connection
        driver.execute("VACUUM")
        driver.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        raw.close()
