"""The store's change rules applied in memory: one home for what :meth:`Store.apply` does.

:func:`apply_local` mirrors the SQL transaction exactly (append-only positions, a fallback load
upgraded in place by a real one, ``last_used_turn`` raised to the max, the turn counter moving
only forward), and :func:`history_rows` lists the history rows that transaction writes. The
in-memory store is built on them, and the trinket uses :func:`apply_local` to keep a turn alive
on the last known set while the database is unreachable.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from tooltray.memory.store.records import (
    Changes,
    EventKind,
    HistoryEvent,
    LoadedTool,
    SessionMeta,
    SessionSnapshot,
)


def empty_snapshot(session_id: str) -> SessionSnapshot:
    """A session the store has never seen."""
    now = datetime.now(timezone.utc)
    return SessionSnapshot(session_id, 0, "active", (), {}, now, now)


def _apply_loads(tools: list[LoadedTool], changes: Changes) -> list[LoadedTool]:
    by_name = {t.name: i for i, t in enumerate(tools)}
    for load in changes.loads:
        if load.name in by_name:
            i = by_name[load.name]
            if tools[i].fallback and not load.fallback:
                tools[i] = replace(tools[i], fallback=False, source=load.source, score=load.score)
            continue
        position = max((t.position for t in tools), default=-1) + 1
        by_name[load.name] = len(tools)
        tools.append(
            LoadedTool(load.name, position, load.turn, None, load.source, load.score, load.fallback)
        )
    return tools


def apply_local(snapshot: SessionSnapshot, changes: Changes) -> SessionSnapshot:
    """Apply ``changes`` to ``snapshot`` with the store's rules (append-only order, max turn).

    Only the store knows whether a session already existed, so ``only_new`` is left to it.
    """
    if changes.skipped(snapshot.meta, existed=False):
        return snapshot
    gone = {u.name for u in changes.unloads}
    tools = [t for t in snapshot.loaded if t.name not in gone]
    tools = _apply_loads(tools, changes)
    used: dict[str, int] = {}
    for use in changes.uses:
        used[use.name] = max(use.turn, used.get(use.name, use.turn))
    tools = [
        replace(t, last_used_turn=max(used[t.name], t.last_used_turn or 0)) if t.name in used else t
        for t in tools
    ]
    meta: SessionMeta = {**snapshot.meta, **(changes.meta or {})}
    return replace(
        snapshot,
        turn=max(snapshot.turn, changes.turn or 0),
        status=changes.status or snapshot.status,
        loaded=tuple(tools),
        meta=meta,
        updated_at=datetime.now(timezone.utc),
    )


def history_rows(before: SessionSnapshot, changes: Changes) -> list[HistoryEvent]:
    """The history rows :meth:`Store.apply` writes for ``changes`` on ``before``, in its order.

    Unloads of loaded tools, then loads that add a tool or upgrade a fallback, then every use,
    then the events as given (filed under this session, as the database files them).
    """
    sid, turn = before.session_id, max(before.turn, changes.turn or 0)
    loaded = {t.name: t.fallback for t in before.loaded}
    rows: list[HistoryEvent] = []
    for unload in changes.unloads:
        if loaded.pop(unload.name, None) is not None:
            rows.append(HistoryEvent(sid, turn, unload.kind, tool=unload.name))
    for load in changes.loads:
        was_fallback = loaded.get(load.name)
        if was_fallback is None or (was_fallback and not load.fallback):
            loaded[load.name] = load.fallback
            kind: EventKind = "fallback" if load.fallback else "loaded"
            rows.append(HistoryEvent(sid, load.turn, kind, load.name, load.source, load.score))
    rows += [HistoryEvent(sid, use.turn, "used", tool=use.name) for use in changes.uses]
    return rows + [replace(e, session_id=sid) for e in changes.events]
