"""The learned tables: a finished turn's update (inside the turn's transaction) and their reads.

Decay without rewriting old rows: the learned turn with id ``i`` adds ``2 ** ((i - epoch) / h)``
to each pair it teaches, where ``h`` is the half-life in learned turns. A weight read at id ``n``
is worth ``weight * 2 ** (-(n - epoch) / h)`` today, so an update touches only the pairs of the
tools it used (O(tools used)), ratios of weights are already decayed, and the weakest row is
simply the smallest ``weight``. When the exponent nears float range the table is rescaled once
and ``epoch`` (a ``tooltray_meta`` row, absent means 0) moves up.

Bounds, enforced every few learned turns (at most 64, so a cap overshoots by under 2%):
``learn_requests`` keeps the newest ``max_requests`` rows (a range delete by id), and
``learn_pairs`` is counted and cut back to 90% of ``max_pairs`` by dropping the weakest rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, Table, bindparam, delete, func, select, text, update

from tooltray.memory.store.learned_memory import KEEP_SHARE, REBASE_AT, every, pairs
from tooltray.memory.store.models import Base, utcnow
from tooltray.memory.store.queries import upsert
from tooltray.memory.store.records import LearnClock, LearnedMate, Learning, PastRequest

PAIRS: Table = Base.metadata.tables["learn_pairs"]
REQUESTS: Table = Base.metadata.tables["learn_requests"]
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
    if row_id % every(lesson.max_requests) == 0:
        conn.execute(delete(REQUESTS).where(REQUESTS.c.id <= row_id - lesson.max_requests))
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


_STATEMENTS: dict[tuple[str, Callable[[Connection], Any]], Any] = {}


def _statement(conn: Connection, build: Callable[[Connection], Any]) -> Any:
    """``build(conn)``'s statement, built once per dialect: building and hashing a fresh upsert
    costs more than SQLite takes to run it."""
    key = (conn.dialect.name, build)
    if key not in _STATEMENTS:
        _STATEMENTS[key] = build(conn)
    return _STATEMENTS[key]


def _teach(conn: Connection) -> Any:
    prev = REQUESTS.alias("prev")
    where = (prev.c.session_id == bindparam("prev_session")) & (
        prev.c.turn == bindparam("prev_turn")
    )
    previous = select(prev.c.tools).where(where).scalar_subquery()
    stmt = upsert(conn, REQUESTS).on_conflict_do_nothing(index_elements=["session_id", "turn"])
    return stmt.returning(REQUESTS.c.id, previous, _epoch_query())


def _pairs(conn: Connection) -> Any:
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
    rows = conn.execute(_MATES, params).all()
    return [LearnedMate(str(t), str(m), float(w), float(o)) for t, m, w, o in rows]


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


def read_requests(conn: Connection, after: int) -> list[PastRequest]:
    """Learned turns with a vector and an id above ``after``, oldest first."""
    cols = REQUESTS.c
    query = select(cols.id, cols.tools, cols.dim, cols.vector, cols.session_id)
    query = query.where((cols.id > after) & cols.vector.is_not(None)).order_by(cols.id)
    return [
        PastRequest(
            int(r.id), tuple(str(t) for t in _tools(r.tools)), r.dim, r.vector, r.session_id
        )
        for r in conn.execute(query).all()
    ]


def _tools(stored: Any) -> list[Any]:
    found = json.loads(stored) if isinstance(stored, str) else stored
    return found if isinstance(found, list) else []
