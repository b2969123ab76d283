"""Per-session state held by the trinket, and the store's change rules applied in memory.

:func:`apply_local` mirrors :meth:`Store.apply` exactly, so when the database is unreachable the
trinket keeps the turn alive on the last known set, queues the changes, and replays them later.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from tooltray.memory.store.records import Changes, LoadedTool, SessionSnapshot

MODE_SELECTED = "selected"
MODE_ALL = "all"
MODE_DISABLED = "disabled"
MODE_DEGRADED = "degraded"


def empty_snapshot(session_id: str) -> SessionSnapshot:
    """A session the store has never seen."""
    now = datetime.now(timezone.utc)
    return SessionSnapshot(session_id, 0, "active", (), {}, now, now)


def grown_turn(snapshot: SessionSnapshot) -> int:
    """The last turn whose growth is stored (``-1``: none), so a restart does not redo it."""
    grown = snapshot.meta.get("grown")
    return grown if isinstance(grown, int) and not isinstance(grown, bool) else -1


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
    meta = dict(snapshot.meta)
    meta.update(changes.meta or {})
    return replace(
        snapshot,
        turn=max(snapshot.turn, changes.turn or 0),
        status=changes.status or snapshot.status,
        loaded=tuple(tools),
        meta=meta,
        updated_at=datetime.now(timezone.utc),
    )


@dataclass
class SessionState:
    """What the trinket keeps in memory for one live session.

    Attributes:
        snapshot: the loaded set and counters as last stored (or applied locally).
        mode: ``selected`` (normal), ``all`` (activation threshold), ``disabled`` or ``degraded``.
        fallback_turn: the turn a ``fallback`` is active for, if any.
        pending: changes the store could not take yet, replayed in order when it is back.
        deferred: tool-used changes applied here and stored with the next commit.
        prefix_hash: hash of the last prompt prefix handed out.
        recorded_turn: the last turn whose prefix hash is in the ``turns`` table.
        grown_turn: the last turn whose user message was matched for growth (once per turn).
        warned: reasons logged loudly in the current outage (cleared when it ends, so that a
            later outage is logged again).
        unread: the store could not be read when this state was made: it is not known yet
            whether the session is stored (see ``ToolLoaderTrinket._unread``).
        taught: allowed tools used since the last turn end (what the turn teaches; learning on).
        user_text: the latest user message (embedded at turn end for learning; never stored
            unless ``learn_keep_text``).
    """

    session_id: str
    snapshot: SessionSnapshot
    mode: str = MODE_SELECTED
    fallback_turn: int | None = None
    pending: list[Changes] = field(default_factory=list)
    deferred: Changes | None = None
    prefix_hash: str | None = None
    recorded_turn: int = -1
    grown_turn: int = -1
    warned: set[str] = field(default_factory=set)
    unread: bool = False
    taught: list[str] = field(default_factory=list)
    user_text: str | None = None

    @property
    def turn(self) -> int:
        """The session's turn counter."""
        return self.snapshot.turn

    def loaded_names(self) -> list[str]:
        """Loaded tools in ``tools=`` order."""
        return self.snapshot.names()

    def is_loaded(self, name: str) -> bool:
        """True when ``name`` is in the loaded set (fallback loads included)."""
        return any(t.name == name for t in self.snapshot.loaded)
