"""What every framework adapter shares: the session's user text, safe signals, registry calls.

An adapter is a client of the trinket's public API. It asks :meth:`prepare` before each model
request, reports ``tool-used`` and ``turn-completed`` through :mod:`tooltray.events`, and runs
any allowed tool the model names (loaded or not), like tooltray's own agent loop.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from tooltray.events import payloads as p
from tooltray.events import signals as sig
from tooltray.memory.agent.calls import argument_problem, as_text
from tooltray.memory.metatools.meta_tools import CALL_TOOL
from tooltray.tools.errors import (
    MetaToolArgumentError,
    ToolNotAllowedError,
    TooltrayError,
    UnknownToolError,
)
from tooltray.tools.spec import decode_arguments

if TYPE_CHECKING:
    from tooltray.memory.core.trinket import ToolLoaderTrinket

log = logging.getLogger("tooltray")
Message = dict[str, Any]


def user_messages(texts: Iterable[Any]) -> list[Message]:
    """Chat-style user messages for ``prepare`` (the trinket counts turns and reads queries)."""
    return [{"role": "user", "content": text} for text in texts]


def emit_used(session_id: str, tool: str, turn: int, ok: bool) -> None:
    """Emit ``tool-used``; a failing receiver is logged, never raised into the framework."""
    try:
        sig.emit(sig.tool_used, session_id, p.ToolUsed(tool=tool, turn=turn or None, ok=ok))
    except TooltrayError as exc:
        log.error("tooltray tool-used receiver failed for %s: %s", tool, exc)


def emit_completed(session_id: str, turn: int) -> None:
    """Emit ``turn-completed`` for ``turn``; a failing receiver is logged, never raised."""
    try:
        sig.emit(sig.turn_completed, session_id, p.TurnCompleted(turn=turn))
    except TooltrayError as exc:
        log.error("tooltray turn-completed receiver failed for %s: %s", session_id, exc)


def run_meta(trinket: ToolLoaderTrinket, session_id: str, name: str, raw: Any) -> str:
    """Run a meta-tool call; a failure becomes text for the model, so the run goes on."""
    decoded = decode_arguments(raw)
    arguments, problem = decoded.value, decoded.problem
    try:
        return trinket.handle_meta(session_id, name, arguments if problem is None else raw)
    except TooltrayError as exc:
        log.error("tooltray meta-tool %s failed for session %s: %s", name, session_id, exc)
        return f"Error: {name} failed: {exc}"


async def run_call(
    trinket: ToolLoaderTrinket, session_id: str, name: str, arguments: Any, turn: int
) -> str:
    """Run one call the model made: ``call_tool`` unwrapped, a meta-tool through the trinket, a
    real tool through the registry (allowed only, loaded or not); real uses are reported."""
    if name == CALL_TOOL:
        try:
            name, arguments = trinket.unwrap(name, arguments)
        except MetaToolArgumentError as exc:
            return f"Error: {exc}"
    if trinket.is_meta(name):
        return run_meta(trinket, session_id, name, arguments)
    text, ok = await run_registry_tool(trinket, session_id, name, arguments)
    if trinket.registry.is_allowed(name):  # a refused name was never a use
        emit_used(session_id, name, turn, ok)
    return text


async def run_registry_tool(
    trinket: ToolLoaderTrinket, session_id: str, name: str, raw: Any
) -> tuple[str, bool]:
    """Run an allowed registry tool (loaded or not): the text for the model and whether it ran ok.

    Arguments are checked against the tool's schema first; a tool's own exception is the model's
    information, not ours; long results are shortened behind ``read_result``.
    """
    try:
        spec = trinket.registry.resolve(name)
    except (UnknownToolError, ToolNotAllowedError) as exc:
        return f"Error: tool {name!r} cannot run here: {exc}", False
    decoded = decode_arguments(raw)
    arguments, bad = decoded.value, argument_problem(spec, decoded)
    if bad is not None:
        return bad, False
    fn = trinket.registry.executor(spec.name)
    if fn is None:
        return f"Error: tool {spec.name!r} has no implementation in this agent; use another.", False
    try:
        value = fn(**arguments)
        full, ok = as_text(await value if inspect.isawaitable(value) else value), True
    except Exception as exc:  # a tool's own failure is the model's information
        full, ok = f"Error: {spec.name} failed: {type(exc).__name__}: {exc}", False
    return shorten(trinket, session_id, spec.name, full), ok


def shorten(trinket: ToolLoaderTrinket, session_id: str, tool: str, text: str) -> str:
    """``text`` shortened behind a ``read_result`` handle when long (unchanged on failure)."""
    try:
        return trinket.shorten(session_id, tool, text)
    except TooltrayError as exc:
        log.error("tooltray could not shorten a %s result: %s", tool, exc)
        return text
