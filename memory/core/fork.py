"""Start a session from another's tools: a subagent or a forked conversation keeps what the
parent found instead of starting from nothing.

The child is a new session with its own rows: the parent's loaded set (the prefix and the tools
revealed after it) is copied into it in order, each tool with the source and score it was loaded
with, and the child's first selection then appends what its own task needs. Nothing is shared
afterwards, so the child's loads, unloads and evictions never touch the parent's. Tools the
child's allow-list refuses are left out; a tool its registry does not know yet (an MCP server
still starting) is kept, since every view shows only allowed tools anyway.
"""

from __future__ import annotations

from collections.abc import Callable

from tooltray.memory.store.base import BaseStore
from tooltray.memory.store.records import (
    Changes,
    HistoryEvent,
    Load,
    SessionMeta,
    SessionSnapshot,
)
from tooltray.tools.errors import SessionForkError, shown
from tooltray.tools.registry import ToolRegistry


def not_refused(registry: ToolRegistry) -> Callable[[str], bool]:
    """Whether a parent's tool may be copied: not one the registry knows and refuses."""
    return lambda name: registry.get(name) is None or registry.is_allowed(name)


def inherited(parent: SessionSnapshot, child_id: str, allowed: Callable[[str], bool]) -> Changes:
    """The change that creates ``child_id`` holding ``parent``'s allowed tools (a new session
    only: ``only_new`` skips it when the child exists by the time it is stored). What the parent
    learned about its provider (a refused deferral or ``tool_addition``) holds for the child, and
    the menu it pinned is the child's: their system prefix stays one (a subagent's calls reuse
    its parent's cached prefix), whichever process serves them."""
    loads = [
        Load(t.name, t.source, 0, t.score, t.fallback) for t in parent.loaded if allowed(t.name)
    ]
    meta: SessionMeta = {"selected": False}
    if "bridged" in parent.meta:
        meta["bridged"] = parent.meta["bridged"]
    if "addition_refused" in parent.meta:
        meta["addition_refused"] = parent.meta["addition_refused"]
    if "menu" in parent.meta:
        meta["menu"] = parent.meta["menu"]
    started = HistoryEvent(child_id, 0, "started", detail=f"fork of {parent.session_id}"[:500])
    return Changes(loads=loads, meta=meta, status="active", only_new=True, events=[started])


def fork_session(
    store: BaseStore, parent_id: str, child_id: str, allowed: Callable[[str], bool]
) -> list[str]:
    """Create ``child_id`` in ``store`` from ``parent_id``'s loaded set; its tool names in order.

    Raises:
        SessionForkError: no such parent, the child exists, or both are the same session.
        StoreError: the database could not be read or written.
    """
    if parent_id == child_id:
        raise SessionForkError(f"cannot fork {shown(parent_id)} into itself: name a new session.")
    parent = store.snapshot(parent_id)
    if parent is None:
        raise SessionForkError(
            f"no session {shown(parent_id)} to fork from: list them with `tooltray sessions`."
        )
    if store.snapshot(child_id) is not None:
        raise SessionForkError(
            f"session {shown(child_id)} exists already: a fork starts a new session, name another."
        )
    return store.apply(child_id, inherited(parent, child_id, allowed)).names()
