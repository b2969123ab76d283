"""The two moments a loaded set shrinks on its own: a fallback expires, idle tools are evicted.

A fallback lasts one turn: at its end, the tools the model used stay (as escapes) and the rest
go. Idle tools leave only at session boundaries (start, resume, context compaction), never
mid-session, so the prompt prefix stays byte-stable between them. Each returns the changes to
commit and hands what left to ``announce``, which the journal fires once the change is stored
(a ``tools-unloaded`` receiver must not still find the tools).
"""

from __future__ import annotations

from collections.abc import Callable

from blinker import NamedSignal
from pydantic import BaseModel

from tooltray.events import payloads as p
from tooltray.events import signals as sig
from tooltray.memory.core.selection import expired_fallbacks, idle_tools
from tooltray.memory.core.session import SessionState
from tooltray.memory.store.records import Changes, Load, Unload

Announce = Callable[[NamedSignal, str, BaseModel], None]


def expire_fallback(state: SessionState, turn: int, announce: Announce) -> Changes:
    """End the session's fallback: used tools stay as escapes, the others are unloaded."""
    keep, drop = expired_fallbacks(state.snapshot.loaded, state.fallback_turn or turn)
    state.fallback_turn = None
    changes = Changes(
        loads=[Load(n, "escape", turn) for n in keep], unloads=[Unload(n) for n in drop]
    )
    if drop:
        gone = p.ToolsUnloaded(turn=turn, tools=drop, reason="fallback-expired")
        announce(sig.tools_unloaded, state.session_id, gone)
    return changes


def evict(state: SessionState, turn: int, idle_turns: int, announce: Announce) -> Changes:
    """Unload the tools idle for ``idle_turns`` (call only at a session boundary)."""
    gone = idle_tools(state.snapshot.loaded, turn, idle_turns)
    if gone:
        evicted = p.ToolsUnloaded(turn=turn, tools=gone, reason="evicted")
        announce(sig.tools_unloaded, state.session_id, evicted)
    return Changes(unloads=[Unload(n, "evicted") for n in gone])
