"""One tool call from the model, carried out safely: meta-tool, or a real tool from the registry.

Real tools are checked against the whole allowed registry, never the loaded subset (an unlisted
tool the model names still runs: the free escape hatch). Whatever goes wrong (unknown name, a
tool outside the allow-list, bad arguments, a tool that raises) becomes a clear text result for
the model, so the turn goes on.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from tooltray.events import payloads as p
from tooltray.events import signals as sig
from tooltray.tools.errors import ToolNotAllowedError, TooltrayError, UnknownToolError
from tooltray.tools.render import canonical_json, render_line
from tooltray.tools.spec import ToolSpec

if TYPE_CHECKING:
    from tooltray.memory.trinket import ToolLoaderTrinket

log = logging.getLogger("tooltray")
MAX_ERRORS = 5

OK, META, ERROR, UNKNOWN, REFUSED, INVALID = "ok", "meta", "error", "unknown", "refused", "invalid"


@dataclass(frozen=True)
class ToolCall:
    """What happened to one tool call.

    Attributes:
        step: the model step (0-based) that made the call.
        name: the name as the model wrote it.
        arguments: the arguments as parsed (a dict, or the raw value when unusable).
        tool: the registered tool that ran (``None`` if nothing ran).
        status: ``ok``, ``meta``, ``error`` (tool raised), ``unknown``, ``refused``, ``invalid``.
        result: the text the model got back (shortened when long).
        full_chars: length of the full result before shortening.
    """

    step: int
    name: str
    arguments: Any
    tool: str | None
    status: str
    result: str
    full_chars: int = 0


def decode_arguments(raw: Any) -> tuple[Any, str | None]:
    """Arguments as a dict, or the raw value and what is wrong with it."""
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            return raw, f"the arguments are not valid JSON ({exc.msg} at char {exc.pos})"
    if not isinstance(raw, Mapping):
        return raw, f"the arguments must be a JSON object, got {type(raw).__name__}"
    return dict(raw), None


@lru_cache(maxsize=512)
def _validator(schema_json: str) -> Any:
    from jsonschema.validators import validator_for

    schema = json.loads(schema_json)
    return validator_for(schema)(schema)


def schema_problems(spec: ToolSpec, arguments: Mapping[str, Any]) -> list[str]:
    """Up to five readable JSON-Schema violations of ``arguments`` (empty when valid)."""
    validator = _validator(canonical_json(spec.parameters))
    errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.absolute_path))
    out = []
    for error in errors[:MAX_ERRORS]:
        where = "/".join(str(part) for part in error.absolute_path)
        out.append(f"{where}: {error.message}" if where else str(error.message))
    return out


def as_text(value: Any) -> str:
    """A tool's return value as the text the model reads."""
    if isinstance(value, str):
        return value
    if value is None:
        return "(no output)"
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


class CallRunner:
    """Carries out tool calls for one agent against a trinket and its registry."""

    def __init__(self, trinket: ToolLoaderTrinket, *, native: bool) -> None:
        self.trinket = trinket
        self.registry = trinket.registry
        self.native = native

    def run(self, session_id: str, turn: int, step: int, name: str, raw: Any) -> ToolCall:
        """Carry out one call and describe it; never raises for anything the model did."""
        arguments, problem = decode_arguments(raw)
        if self.trinket.is_meta(name):
            text = self._meta(session_id, name, arguments if problem is None else raw)
            return ToolCall(step, name, arguments, name, META, text, len(text))
        try:
            spec = self.registry.resolve(name)
        except ToolNotAllowedError as exc:
            self.refuse(session_id, turn, name, str(exc))
            text = f"Error: tool {name!r} is not allowed for this agent, so it was refused. {exc}"
            return ToolCall(step, name, arguments, None, REFUSED, text, len(text))
        except UnknownToolError as exc:
            return ToolCall(step, name, arguments, None, UNKNOWN, *self._unknown(name, exc))
        if problem is None:
            problems = schema_problems(spec, arguments)
            problem = "; ".join(problems) if problems else None
        if problem is not None:
            text = (
                f"Error: bad arguments for {spec.name}: {problem}. Call it as {render_line(spec)}"
            )
            return ToolCall(step, name, arguments, spec.name, INVALID, text, len(text))
        return self._execute(session_id, turn, step, name, spec, arguments)

    def _meta(self, session_id: str, name: str, arguments: Any) -> str:
        try:
            return self.trinket.handle_meta(session_id, name, arguments)
        except TooltrayError as exc:
            log.error("tooltray meta-tool %s failed for session %s: %s", name, session_id, exc)
            return f"Error: {name} failed: {exc}"

    def _unknown(self, name: str, exc: UnknownToolError) -> tuple[str, int]:
        hint = f" Did you mean: {', '.join(exc.candidates)}?" if exc.candidates else ""
        how = (
            "Call load_tools with a query to find the right tool."
            if self.native
            else "Use one of the listed tools."
        )
        text = f"Error: there is no tool named {name!r}.{hint} {how}"
        return text, len(text)

    def _execute(
        self, session_id: str, turn: int, step: int, name: str, spec: ToolSpec, args: dict[str, Any]
    ) -> ToolCall:
        fn = self.registry.executor(spec.name)
        if fn is None:
            text = f"Error: tool {spec.name!r} has no implementation in this agent; use another."
            return ToolCall(step, name, args, spec.name, ERROR, text, len(text))
        ok = True
        try:
            value = fn(**args)
            if inspect.isawaitable(value):
                value = asyncio.run(_await(value))
            full = as_text(value)
        except Exception as exc:  # a tool's own failure is the model's information, not ours
            ok = False
            full = f"Error: {spec.name} failed: {type(exc).__name__}: {exc}"
        result = self._shorten(session_id, spec.name, full)
        self._used(session_id, spec.name, turn, ok)
        return ToolCall(step, name, args, spec.name, OK if ok else ERROR, result, len(full))

    def _shorten(self, session_id: str, tool: str, text: str) -> str:
        try:
            return self.trinket.shorten(session_id, tool, text)
        except TooltrayError as exc:
            log.error("tooltray could not shorten a %s result: %s", tool, exc)
            return text

    def _used(self, session_id: str, tool: str, turn: int, ok: bool) -> None:
        try:
            sig.emit(sig.tool_used, session_id, p.ToolUsed(tool=tool, turn=turn, ok=ok))
        except TooltrayError as exc:
            log.error("tooltray tool-used receiver failed for %s: %s", tool, exc)

    def refuse(self, session_id: str, turn: int, name: str, why: str) -> None:
        """Record a refused call in the session history through the trinket."""
        try:
            self.trinket.refuse(session_id, name, why)
        except TooltrayError as exc:
            log.error("tooltray could not record a refused call to %s: %s", name, exc)


async def _await(value: Any) -> Any:
    return await value
