"""The store's tables in SQL: the schema, its reads, and one change set written in one transaction.

The models must match the Alembic migrations exactly. The session row is the lock every change to
that session takes, and a change set is written in the order lock, unloads, loads, uses, events,
with the same rules as :func:`tooltray.memory.store.records.apply_local`; a change whose guard finds
it already made writes nothing. :func:`read_snapshot` touches only ``sessions`` and
``loaded_tools`` by key, so it stays fast however long the history grows. Learned weights decay
without rewriting old rows: learned turn ``i`` adds ``2 ** ((i - epoch) / half_life)`` to each pair
it teaches, so an update touches only its own pairs and the weakest row is simply the smallest
``weight`` (the table is rescaled once, moving ``epoch``, when the exponent nears float range);
the bounds are enforced every few learned turns.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from itertools import starmap
from operator import attrgetter
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Connection,
    DateTime,
    Dialect,
    Engine,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
    bindparam,
    delete,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from tooltray.memory.store.probe import TABLES as TABLES  # re-exported: the models define them
from tooltray.memory.store.records import (
    KEEP_SHARE,
    REBASE_AT,
    Changes,
    HistoryEvent,
    LearnClock,
    LearnedMate,
    LearnedSearch,
    Learning,
    LoadedTool,
    PastRequest,
    SessionInfo,
    SessionMeta,
    SessionSnapshot,
    TurnRecord,
    as_meta,
    every,
    pairs,
)

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    """The current time, timezone-aware in UTC (what every timestamp column holds)."""
    return datetime.now(timezone.utc)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that always comes back timezone-aware UTC, even from SQLite (which drops it)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        value = value.astimezone(timezone.utc)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)  # type: ignore[no-any-return]
        return value.astimezone(timezone.utc)  # type: ignore[no-any-return]


# SQLite only aliases INTEGER PRIMARY KEY to the rowid, so BIGINT would not autoincrement there.
HistoryId = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    """Declarative base holding the store's metadata (with stable constraint names)."""

    metadata = MetaData(naming_convention=NAMING)


class SessionRow(Base):
    """One conversation: its turn counter, status and free-form meta."""

    __tablename__ = "sessions"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    turn: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String, default="active")
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LoadedToolRow(Base):
    """One tool in a session's loaded set; ``position`` is unique per session and never reused."""

    __tablename__ = "loaded_tools"
    __table_args__ = (UniqueConstraint("session_id", "position"),)

    session_id: Mapped[str] = mapped_column(
        String, ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str] = mapped_column(String, primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
    loaded_turn: Mapped[int] = mapped_column(Integer)
    last_used_turn: Mapped[int | None] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String)
    score: Mapped[float | None] = mapped_column(Float)
    fallback: Mapped[bool] = mapped_column(Boolean, default=False)


class HistoryRow(Base):
    """One append-only event of a session (loaded, used, unloaded, ...)."""

    __tablename__ = "history"
    __table_args__ = (
        Index("ix_history_session_id_turn", "session_id", "turn"),
        Index("ix_history_kind", "kind"),
    )

    id: Mapped[int] = mapped_column(HistoryId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(String, ForeignKey("sessions.id"))
    turn: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String)
    tool: Mapped[str | None] = mapped_column(String)
    source: Mapped[str | None] = mapped_column(String)
    score: Mapped[float | None] = mapped_column(Float)
    detail: Mapped[str | None] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TurnRow(Base):
    """What one turn looked like from the model's side (re-recording a turn overwrites it).

    The last five columns are written when the turn completes: ``prompt_reused`` and
    ``prompt_new`` are tooltray's estimate of the turn's prompt tokens (every model call's
    prompt as it rendered it, split at the first part that differs from the call before), the
    ``usage_*`` columns what the provider reported, when the agent passed it with
    ``turn-completed`` (cached and uncached input tokens, output tokens).
    """

    __tablename__ = "turns"

    session_id: Mapped[str] = mapped_column(String, ForeignKey("sessions.id"), primary_key=True)
    turn: Mapped[int] = mapped_column(Integer, primary_key=True)
    prefix_hash: Mapped[str] = mapped_column(String)
    tool_tokens: Mapped[int] = mapped_column(Integer)
    loaded_count: Mapped[int] = mapped_column(Integer)
    eager_tokens: Mapped[int | None] = mapped_column(Integer)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    prompt_reused: Mapped[int | None] = mapped_column(Integer)
    prompt_new: Mapped[int | None] = mapped_column(Integer)
    usage_cached: Mapped[int | None] = mapped_column(Integer)
    usage_uncached: Mapped[int | None] = mapped_column(Integer)
    usage_output: Mapped[int | None] = mapped_column(Integer)


class EmbeddingRow(Base):
    """A cached embedding: float32 bytes of one text (by content hash) under one embedder.

    ``used_at`` is when an index last looked it up (at most a day stale): retention keeps the
    vectors of tools some catalog still has, however old, and drops the others.
    """

    __tablename__ = "embeddings"

    embedder_id: Mapped[str] = mapped_column(String, primary_key=True)
    content_hash: Mapped[str] = mapped_column(String, primary_key=True)
    dim: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    used_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ResultRow(Base):
    """The full text of a long tool result; the model sees a compressed view and its handle."""

    __tablename__ = "results"
    __table_args__ = (Index("ix_results_session_id", "session_id"),)

    handle: Mapped[str] = mapped_column(String, primary_key=True)
    session_id: Mapped[str] = mapped_column(String)
    turn: Mapped[int] = mapped_column(Integer)
    tool: Mapped[str] = mapped_column(String)
    content: Mapped[str] = mapped_column(Text)
    chars: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class MetaRow(Base):
    """Facts about the database itself, e.g. which tooltray version last upgraded it."""

    __tablename__ = "tooltray_meta"

    key: Mapped[str] = mapped_column(String, primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class LearnPairRow(Base):
    """Co-use: how often ``mate`` was used in the same or an adjacent turn as ``tool``.

    ``weight`` is a decayed count kept in a growing scale (see ``tooltray.memory.store.tables``):
    only ratios of weights mean anything, and ``tool = mate`` holds the tool's own turn count.
    """

    __tablename__ = "learn_pairs"
    __table_args__ = {"sqlite_with_rowid": False}  # clustered by (tool, mate): reads stay fast

    tool: Mapped[str] = mapped_column(String, primary_key=True)
    mate: Mapped[str] = mapped_column(String, primary_key=True)
    weight: Mapped[float] = mapped_column(Float)


class LearnRequestRow(Base):
    """One past turn that used tools: its user message's vector and the tools it led to.

    The id orders learned turns and is the clock their decay counts in. ``text`` stays empty
    unless ``learn_keep_text`` is on.
    """

    __tablename__ = "learn_requests"
    __table_args__ = (UniqueConstraint("session_id", "turn"),)

    id: Mapped[int] = mapped_column(HistoryId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(String)
    turn: Mapped[int] = mapped_column(Integer)
    tools: Mapped[list[str]] = mapped_column(JSON)
    embedder_id: Mapped[str | None] = mapped_column(String)
    dim: Mapped[int | None] = mapped_column(Integer)
    vector: Mapped[bytes | None] = mapped_column(LargeBinary)
    text: Mapped[str | None] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LearnSearchRow(Base):
    """One past ``load_tools`` search: its query's vector and the tools its turn then used
    after it (what a search like it led to).

    The id orders learned searches and is the clock their decay counts in. ``text`` stays
    empty unless ``learn_keep_text`` is on; rows are written only with their turn's
    ``learn_requests`` row, so a replayed turn teaches its searches once.
    """

    __tablename__ = "learn_searches"

    id: Mapped[int] = mapped_column(HistoryId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(String)
    turn: Mapped[int] = mapped_column(Integer)
    tools: Mapped[list[str]] = mapped_column(JSON)
    embedder_id: Mapped[str] = mapped_column(String)
    dim: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    text: Mapped[str | None] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


SESSIONS: Table = Base.metadata.tables["sessions"]
LOADED: Table = Base.metadata.tables["loaded_tools"]
HISTORY: Table = Base.metadata.tables["history"]
TURNS: Table = Base.metadata.tables["turns"]
EMBEDDINGS: Table = Base.metadata.tables["embeddings"]
RESULTS: Table = Base.metadata.tables["results"]


def upsert(conn: Connection | Engine, table: Table) -> Any:
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
    return tuple(starmap(LoadedTool, conn.execute(query)))  # Boolean reads back as a bool


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


PAIRS: Table = Base.metadata.tables["learn_pairs"]
REQUESTS: Table = Base.metadata.tables["learn_requests"]
SEARCHES: Table = Base.metadata.tables["learn_searches"]
META: Table = Base.metadata.tables["tooltray_meta"]
EPOCH_KEY = "learn_epoch"
PG_LOCK_KEY = 7_461_120_314
"""Advisory lock: learning transactions share it, a rescale takes it alone (PostgreSQL)."""


def learn_turn(conn: Connection, session_id: str, lesson: Learning) -> None:
    """Teach what ``lesson`` says, once per (session, turn): a replayed turn teaches nothing."""
    tools = sorted(set(lesson.tools))
    if not tools:
        return
    taught = _insert_request(conn, session_id, lesson, tools)
    if taught is None:
        return
    row_id, previous, epoch = taught
    epoch = _epoch_for(conn, row_id, epoch, lesson.half_life)
    weight = 2.0 ** ((row_id - epoch) / lesson.half_life)
    _add_pairs(conn, pairs(tools, previous), weight)
    row = partial(_search_row, session_id, lesson.turn)
    searches = list(map(row, filter(attrgetter("tools"), lesson.searches)))
    if searches:
        conn.execute(insert(SEARCHES), searches)
    if row_id % every(lesson.max_requests) == 0:
        conn.execute(delete(REQUESTS).where(REQUESTS.c.id <= row_id - lesson.max_requests))
        newest = select(func.max(SEARCHES.c.id)).scalar_subquery()
        conn.execute(delete(SEARCHES).where(SEARCHES.c.id <= newest - lesson.max_requests))
    if row_id % every(lesson.max_pairs) == 0:
        evict_pairs(conn, lesson.max_pairs)


def _insert_request(
    conn: Connection, session_id: str, lesson: Learning, tools: list[str]
) -> tuple[int, list[str], int] | None:
    """Insert the turn's row: its id, the previous turn's tools and the epoch, in one round trip;
    ``None`` when this turn was already learned."""
    dim = len(lesson.vector) // 4 if lesson.vector is not None else None
    values = {
        "session_id": session_id,
        "turn": lesson.turn,
        "tools": tools,
        "embedder_id": lesson.embedder_id,
        "dim": dim,
        "vector": lesson.vector,
        "text": lesson.text,
        "at": utcnow(),
        "prev_session": session_id,
        "prev_turn": lesson.turn - 1,
    }
    row = conn.execute(_statement(conn, _teach), values).first()
    if row is None:
        return None
    found = json.loads(row[1]) if isinstance(row[1], str) else row[1]
    previous = [str(t) for t in found] if isinstance(found, list) else []
    return int(row[0]), previous, _as_epoch(row[2])


Bind = Connection | Engine
_STATEMENTS: dict[tuple[str, Callable[[Bind], Any]], Any] = {}


def _statement(conn: Bind, build: Callable[[Bind], Any]) -> Any:
    """``build(conn)``'s statement, built once per dialect: building and hashing a fresh upsert
    costs more than SQLite takes to run it."""
    key = (conn.dialect.name, build)
    if key not in _STATEMENTS:
        _STATEMENTS[key] = build(conn)
    return _STATEMENTS[key]


def prepare_statements(engine: Engine) -> None:
    """Build the engine's dialect's upserts when the store opens, not in a session's turn."""
    for build in (_teach, _pairs, _turn_upsert):
        _statement(engine, build)


def _teach(conn: Bind) -> Any:
    prev = REQUESTS.alias("prev")
    where = (prev.c.session_id == bindparam("prev_session")) & (
        prev.c.turn == bindparam("prev_turn")
    )
    previous = select(prev.c.tools).where(where).scalar_subquery()
    stmt = upsert(conn, REQUESTS).on_conflict_do_nothing(index_elements=["session_id", "turn"])
    return stmt.returning(REQUESTS.c.id, previous, _epoch_query())


def _pairs(conn: Bind) -> Any:
    stmt = upsert(conn, PAIRS)
    return stmt.on_conflict_do_update(
        index_elements=["tool", "mate"], set_={"weight": PAIRS.c.weight + stmt.excluded.weight}
    )


def _epoch_query() -> Any:
    return select(META.c.value).where(META.c.key == EPOCH_KEY).scalar_subquery()


def _as_epoch(value: Any) -> int:
    return int(value) if value is not None else 0


def read_epoch(conn: Connection) -> int:
    """The id the weights' scale counts from (0 until the first rescale)."""
    return _as_epoch(conn.execute(select(_epoch_query())).scalar())


def _epoch_for(conn: Connection, row_id: int, epoch: int, half_life: float) -> int:
    """The epoch to add in (``epoch`` as read), rescaling first when the exponent got large.

    On PostgreSQL a rescale must not interleave with another writer's increments (computed in
    the old scale), hence the shared/exclusive advisory lock and the epoch read again under
    it; SQLite writers are serial anyway.
    """
    pg = conn.dialect.name == "postgresql"
    if (row_id - epoch) / half_life < REBASE_AT:
        if pg:
            conn.execute(text("SELECT pg_advisory_xact_lock_shared(:k)"), {"k": PG_LOCK_KEY})
            epoch = read_epoch(conn)
        return epoch
    if pg:
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": PG_LOCK_KEY})
        epoch = read_epoch(conn)
    if (row_id - epoch) / half_life >= REBASE_AT:
        _rescale(conn, 2.0 ** (-(row_id - epoch) / half_life), row_id)
        epoch = row_id
    return epoch


def _rescale(conn: Connection, factor: float, epoch: int) -> None:
    conn.execute(update(PAIRS).values(weight=PAIRS.c.weight * factor))
    stmt = upsert(conn, META).values(key=EPOCH_KEY, value=str(epoch))
    conn.execute(stmt.on_conflict_do_update(index_elements=["key"], set_={"value": str(epoch)}))


def _add_pairs(conn: Connection, taught: list[tuple[str, str]], weight: float) -> None:
    rows = [{"tool": a, "mate": b, "weight": weight} for a, b in taught]
    conn.execute(_statement(conn, _pairs), rows)


def evict_pairs(conn: Connection, cap: int) -> int:
    """Cut ``learn_pairs`` back to 90% of ``cap`` by dropping the weakest rows; how many went."""
    count = int(conn.execute(select(func.count()).select_from(PAIRS)).scalar_one())
    if count <= cap:
        return 0
    keep = int(cap * KEEP_SHARE)
    query = select(PAIRS.c.weight).order_by(PAIRS.c.weight.desc()).offset(keep).limit(1)
    cut = conn.execute(query).scalar()
    return int(conn.execute(delete(PAIRS).where(PAIRS.c.weight <= cut)).rowcount)


def read_mates(conn: Connection, tools: list[str], min_share: float) -> list[LearnedMate]:
    """The given tools' mates (with each tool's own weight).

    Only mates whose weight is at least ``min_share`` of the tool's own come back: a hub tool
    has hundreds of rare mates, and reading them all would cost more than the selection.
    """
    params = {"tools": list(tools), "share": min_share}
    return list(starmap(LearnedMate, conn.execute(_MATES, params)))  # typed columns


def _mates_query() -> Any:
    """Built once: selection asks it every turn, and building it cost more than running it."""
    pair, own = PAIRS.alias("pair"), PAIRS.alias("own")
    query = select(pair.c.tool, pair.c.mate, pair.c.weight, own.c.weight).join(
        own, (own.c.tool == pair.c.tool) & (own.c.mate == pair.c.tool)
    )
    return query.where(
        pair.c.tool.in_(bindparam("tools", expanding=True))
        & (pair.c.mate != pair.c.tool)
        & (pair.c.weight >= bindparam("share") * own.c.weight)
    )


_MATES = _mates_query()


def read_clock(conn: Connection) -> LearnClock:
    """The :class:`LearnClock` in one round trip (it is asked at every selection)."""
    row = conn.execute(_CLOCK).one()
    return LearnClock(int(row[0] or 0), int(row[1] or 0), _as_epoch(row[2]))


def _clock_query() -> Any:
    newest = select(func.max(REQUESTS.c.id)).scalar_subquery()  # apart: SQLite answers a lone
    oldest = select(func.min(REQUESTS.c.id)).scalar_subquery()  # min or max from the index
    return select(newest, oldest, _epoch_query())


_CLOCK = _clock_query()


def read_requests(conn: Connection, after: int) -> tuple[LearnClock, list[PastRequest]]:
    """The :class:`LearnClock`, and the learned turns with a vector and an id above ``after``,
    oldest first (none when nothing newer was learned)."""
    clock = read_clock(conn)
    if clock.newest <= after:
        return clock, []
    return clock, _past_rows(conn, REQUESTS, after, REQUESTS.c.vector.is_not(None))


def _search_row(session_id: str, turn: int, search: LearnedSearch) -> dict[str, Any]:
    """A ``learn_searches`` row's values."""
    return {
        "session_id": session_id,
        "turn": turn,
        "tools": list(search.tools),
        "embedder_id": search.embedder_id,
        "dim": len(search.vector) // 4,
        "vector": search.vector,
        "text": search.text,
        "at": utcnow(),
    }


def read_searches(conn: Connection, after: int) -> tuple[LearnClock, list[PastRequest]]:
    """The learned searches' clock (newest and oldest ids; epoch 0) and their rows above
    ``after``, oldest first, in one read (no rows when none is newer)."""
    cols = SEARCHES.c
    newest, oldest = conn.execute(select(func.max(cols.id), func.min(cols.id))).one()
    clock = LearnClock(int(newest or 0), int(oldest or 0), 0)
    if clock.newest <= after:
        return clock, []
    return clock, _past_rows(conn, SEARCHES, after)


def _past_rows(conn: Connection, table: Table, after: int, *where: Any) -> list[PastRequest]:
    """``table``'s learned rows (``learn_requests`` or ``learn_searches``: the same columns)
    with an id above ``after`` and ``where``, oldest first."""
    cols = table.c
    query = select(cols.id, cols.tools, cols.dim, cols.vector, cols.session_id)
    query = query.where(cols.id > after, *where).order_by(cols.id)
    return [
        PastRequest(int(r.id), tuple(map(str, _tools(r.tools))), r.dim, r.vector, r.session_id)
        for r in conn.execute(query).all()
    ]


def _tools(stored: Any) -> list[Any]:
    found = json.loads(stored) if isinstance(stored, str) else stored
    return found if isinstance(found, list) else []


@dataclass
class _Row:
    position: int
    fallback: bool
    last_used_turn: int  # -1: never used


def apply_changes(conn: Connection, session_id: str, changes: Changes) -> SessionSnapshot:
    """Apply ``changes`` to ``session_id`` inside the caller's (write) transaction."""
    return apply_steps(conn, session_id, [changes])


def apply_steps(conn: Connection, session_id: str, steps: Sequence[Changes]) -> SessionSnapshot:
    """Apply one call's change steps in order, each with its own guards, and write the
    session row once at the end (as many rows as the steps, one session update)."""
    now = utcnow()
    session, existed = _lock_session(conn, session_id, now)
    turn, status = session.turn, session.status
    meta: SessionMeta = as_meta(session.meta)
    rows: dict[str, _Row] | None = None
    written = False
    for changes in steps:
        if changes.skipped(meta, existed):
            existed = True
            continue
        rows = _loaded_rows(conn, session_id) if rows is None else rows
        turn = max(turn, changes.turn or 0)
        _apply_rows(conn, session_id, turn, changes, rows, now)
        status, meta = changes.status or status, {**meta, **(changes.meta or {})}
        existed = written = True
    if not written:
        return _stored(conn, session_id, session)
    values = {"turn": turn, "status": status, "meta": meta, "updated_at": now}
    conn.execute(update(SESSIONS).where(SESSIONS.c.id == session_id).values(**values))
    loaded = read_loaded(conn, session_id)
    return SessionSnapshot(session_id, turn, status, loaded, meta, session.created_at, now)


def _apply_rows(
    conn: Connection, sid: str, turn: int, changes: Changes, rows: dict[str, _Row], now: datetime
) -> None:
    """One step's rows: loaded tools, history, its turn record, what it teaches, its usage."""
    history: list[dict[str, Any]] = []  # each part runs only when the step has some
    if changes.unloads:
        _unload(conn, sid, turn, changes, rows, history)
    if changes.loads:
        _load(conn, sid, changes, rows, history)
    if changes.uses:
        _use(conn, sid, changes, rows, history)
    if changes.events:
        history += [
            _hist(
                sid,
                e.turn,
                e.kind,
                e.tool,
                source=e.source,
                score=e.score,
                detail=e.detail,
                at=e.at,
            )
            for e in changes.events
        ]
    if history:
        for row in history:
            row["at"] = row["at"] or now
        conn.execute(insert(HISTORY), history)
    if changes.turn_record is not None:
        _record_turn(conn, sid, changes, now)
    if changes.learn is not None:
        learn_turn(conn, sid, changes.learn)
    if changes.usage is not None:
        where = (TURNS.c.session_id == sid) & (TURNS.c.turn == changes.usage.turn)
        conn.execute(update(TURNS).where(where).values(**changes.usage.values()))


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
    result = conn.execute(_LOADED_ROWS, {"sid": session_id})
    return {r.name: _Row(r.position, r.fallback, r.last_used) for r in result}


_LOADED_ROWS = select(
    LOADED.c.name,
    LOADED.c.position,
    LOADED.c.fallback,
    func.coalesce(LOADED.c.last_used_turn, -1).label("last_used"),
).where(LOADED.c.session_id == bindparam("sid"))
"""Built once: every write reads the session's rows (never used: -1)."""


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


def _hist(sid: str, turn: int, kind: str, tool: str | None, **extra: Any) -> dict[str, Any]:
    """One history row: a loaded set's change (its extras are None) or a change's event."""
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
            rows[load.name] = _Row(next_pos, load.fallback, -1)
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
    raised = []
    for name, turn in latest.items():
        if name in rows and turn > rows[name].last_used_turn:
            rows[name].last_used_turn = turn  # the call's next step reads it
            raised.append({"sid": sid, "n": name, "t": turn})
    if raised:
        where = (LOADED.c.session_id == bindparam("sid")) & (LOADED.c.name == bindparam("n"))
        stmt = update(LOADED).where(where).values(last_used_turn=bindparam("t"))
        conn.execute(stmt, raised)


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
    conn.execute(_statement(conn, _turn_upsert), values)


def _turn_upsert(conn: Bind) -> Any:
    stmt = upsert(conn, TURNS)
    keep = ("prefix_hash", "tool_tokens", "loaded_count", "eager_tokens", "at")
    return stmt.on_conflict_do_update(
        index_elements=["session_id", "turn"], set_={k: stmt.excluded[k] for k in keep}
    )
