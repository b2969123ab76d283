"""One meta-tool call, from its name and raw arguments to its effect, and the signals it sends.

The trinket commits what :func:`dispatch` returns, then calls :func:`announce`; both stay free of
storage, so a gateway or an adapter sees the same effects and the same signals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from tooltray.events import payloads as p
from tooltray.events import signals as sig
from tooltray.memory.metatools.effects import (
    Outcome,
    Search,
    SessionState,
    fallback,
    load_tools,
    unload_tools,
)
from tooltray.memory.metatools.specs import (
    FALLBACK,
    LOAD_TOOLS,
    META_TOOL_NAMES,
    READ_RESULT,
    UNLOAD_TOOLS,
    parse_load,
    parse_read_result,
    parse_unload,
)
from tooltray.memory.store.records import Changes, HistoryEvent
from tooltray.tools.errors import MetaToolArgumentError
from tooltray.tools.registry import ToolRegistry

ReadResult = Callable[[str, int], str]
Escape = Literal["load_tools", "fallback"]


def dispatch(
    name: str,
    arguments: Any,
    registry: ToolRegistry,
    state: SessionState,
    search: Search,
    read: ReadResult,
    hard_max: int,
) -> tuple[Outcome, Escape | None]:
    """Carry out one meta-tool call and say which escape hatch it was, if any.

    Raises:
        MetaToolArgumentError: the name is not a meta-tool or the arguments are unusable.
    """
    if name == LOAD_TOOLS:
        return load_tools(registry, state, parse_load(arguments), search, hard_max), "load_tools"
    if name == UNLOAD_TOOLS:
        return unload_tools(registry, state, parse_unload(arguments)), None
    if name == FALLBACK:
        state.fallback_turn = state.turn
        return fallback(registry, state), "fallback"
    if name == READ_RESULT:
        handle, offset = parse_read_result(arguments)
        return Outcome(Changes(), read(handle, offset)), None
    raise MetaToolArgumentError(f"{name!r} is not a meta-tool: use one of {META_TOOL_NAMES}.")


def mark_escape(state: SessionState, out: Outcome, escape: Escape | None) -> None:
    """Record a load through an escape hatch as an ``escape`` event in the same changes.

    The detail keeps what the model asked for (``load_tools tools: calendar, git``, ``load_tools
    query: book a flight``, or both joined by ``; ``): the names and words it loaded by are what
    ``history`` needs to show why the selection missed.
    """
    if escape and out.added:
        asked = [f"tools: {', '.join(out.asked)}"] if out.asked else []
        asked += [f"query: {out.query}"] if out.query else []
        detail = f"{escape} {'; '.join(asked)}"[:500] if asked else escape
        event = HistoryEvent(state.session_id, state.turn, "escape", detail=detail)
        out.changes.events.append(event)


def announce(state: SessionState, out: Outcome, escape: Escape | None) -> None:
    """Signal what changed: ``tools-loaded`` and ``escape-hatch``, or ``tools-unloaded``."""
    sid, turn = state.session_id, state.turn
    if out.added:
        kind: Escape = "fallback" if escape == FALLBACK else "load_tools"
        source = "fallback" if kind == "fallback" else "escape"
        sig.emit(sig.tools_loaded, sid, p.ToolsLoaded(turn=turn, tools=out.added, source=source))
        sig.emit(sig.escape_hatch, sid, p.EscapeHatch(turn=turn, kind=kind, tools=out.added))
    if out.removed:
        gone = p.ToolsUnloaded(turn=turn, tools=out.removed, reason="unloaded")
        sig.emit(sig.tools_unloaded, sid, gone)
