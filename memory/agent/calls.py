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
import threading
import time
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import TYPE_CHECKING, Any

import regex
from jsonschema.exceptions import ValidationError
from jsonschema.validators import extend, validator_for
from jsonschema_specifications import REGISTRY as SPECIFICATIONS

from tooltray.events import payloads as p
from tooltray.events import signals as sig
from tooltray.memory.metatools.meta_tools import CALL_TOOL, parse_bridge
from tooltray.tools.errors import (
    MetaToolArgumentError,
    ToolNotAllowedError,
    TooltrayError,
    UnknownToolError,
    shown,
)
from tooltray.tools.render import canonical_json, render_line
from tooltray.tools.spec import Decoded, ToolSpec, decode_arguments

if TYPE_CHECKING:
    from tooltray.memory.core.trinket import ToolLoaderTrinket

log = logging.getLogger("tooltray")
MAX_ERRORS = 5
MAX_SCANNED = 50
MAX_PROBLEM_CHARS = 300
PATTERN_SECONDS = 0.5
_DEADLINE: ContextVar[float] = ContextVar("tooltray_pattern_deadline", default=0.0)

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


class _PatternTimeout(Exception):
    """A ``pattern`` check ran past the call's time budget (a catastrophic regex)."""


def _search(pattern: Any, text: str) -> bool | None:
    """Whether ``pattern`` matches: ``None`` when the schema's pattern is unusable.

    Python's ``re`` (what jsonschema uses) can backtrack for hours on a pattern like
    ``(a|aa)+$``; the ``regex`` package speaks the same syntax (lookarounds and backreferences
    included, which RE2 lacks) and stops at a timeout. But that timeout counts the process's
    CPU time (C ``clock()``): on a starved machine 0.5 CPU seconds took 2-8 s. So the match
    runs in a thread (``concurrent``: without the GIL) and the call waits for it only until the
    budget's wall-clock deadline; a match still running then is abandoned, and its own CPU
    timeout (what was left of the budget) ends it soon after.
    """
    left = _DEADLINE.get() - time.monotonic()
    if left <= 0:
        raise _PatternTimeout(pattern)
    outcome: list[Any] = []
    worker = threading.Thread(target=_match, args=(pattern, text, left, outcome), daemon=True)
    worker.start()
    worker.join(left)
    if not outcome or isinstance(outcome[0], TimeoutError):
        raise _PatternTimeout(pattern)
    if isinstance(outcome[0], (regex.error, TypeError, ValueError)):
        log.warning("tooltray skips the unusable schema pattern %s", shown(pattern))
        return None
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return bool(outcome[0])


def _match(pattern: Any, text: str, cpu_seconds: float, outcome: list[Any]) -> None:
    """The match, or the exception it raised, appended to ``outcome`` (a worker thread)."""
    try:
        outcome.append(
            regex.search(pattern, text, timeout=cpu_seconds, concurrent=True) is not None
        )
    except Exception as exc:
        outcome.append(exc)


def _slow(pattern: Any) -> ValidationError:
    return ValidationError(
        f"could not be checked against the tool's pattern {shown(pattern)} within "
        f"{PATTERN_SECONDS} s (it backtracks badly); send a shorter or simpler value"
    )


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    try:
        found = _search(pattern, instance)
    except _PatternTimeout:
        yield _slow(pattern)
        return
    if found is False:
        yield ValidationError(f"{shown(instance)} does not match {shown(pattern)}")


def _pattern_properties(
    validator: Any, patterns: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object") or not isinstance(patterns, Mapping):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            try:
                found = _search(pattern, key)
            except _PatternTimeout:
                yield _slow(pattern)
                return
            if found:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


@lru_cache(maxsize=16)
def _bounded(base: Any) -> Any:
    """``base`` with ``pattern`` and ``patternProperties`` checked by the time-bounded engine."""
    return extend(base, {"pattern": _pattern, "patternProperties": _pattern_properties})


@lru_cache(maxsize=512)
def _validator(schema_json: str) -> Any:
    """A validator for one schema that never fetches a ``$ref`` from the network.

    jsonschema's default registry downloads remote references; this one has no retriever, so a
    tool schema cannot make argument checking send requests to wherever it points.
    """
    schema = json.loads(schema_json)
    return _bounded(validator_for(schema))(schema, registry=SPECIFICATIONS)


def _sort_key(error: ValidationError) -> list[tuple[str, Any]]:
    return [(type(part).__name__, part) for part in error.absolute_path]


def _describe(error: ValidationError) -> str:
    where = "/".join(str(part) for part in error.absolute_path)
    text = f"{where}: {error.message}" if where else str(error.message)
    return text if len(text) <= MAX_PROBLEM_CHARS else text[: MAX_PROBLEM_CHARS - 1] + "…"


def schema_problems(spec: ToolSpec, arguments: Mapping[str, Any]) -> list[str]:
    """Up to five readable JSON-Schema violations of ``arguments`` (empty when valid).

    Every ``pattern`` check of one call shares a budget of :data:`PATTERN_SECONDS`, so a hostile
    pattern costs the turn at most that. A schema that cannot be used at all (a broken keyword,
    an unresolvable ``$ref``) is the tool author's problem, not the model's: the arguments go
    through unchecked and a warning is logged.
    """
    token = _DEADLINE.set(time.monotonic() + PATTERN_SECONDS)
    try:
        validator = _validator(canonical_json(spec.parameters))
        found = list(islice(validator.iter_errors(dict(arguments)), MAX_SCANNED))
        errors = sorted(found, key=_sort_key)
    except Exception as exc:  # a broken third-party schema must not break the call
        log.warning("tooltray could not check arguments for %s: %s", spec.name, shown(exc, 200))
        return []
    finally:
        _DEADLINE.reset(token)
    return [_describe(error) for error in errors[:MAX_ERRORS]]


def argument_problem(spec: ToolSpec, decoded: Decoded) -> str | None:
    """The error text for arguments ``spec`` cannot take (undecodable, or against its schema),
    naming how to call it; ``None`` when they fit. Every path that runs a tool answers alike."""
    problem = decoded.problem or "; ".join(schema_problems(spec, decoded.value)) or None
    if problem is None:
        return None
    return f"Error: bad arguments for {spec.name}: {problem}. Call it as {render_line(spec)}"


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
        if name == CALL_TOOL:
            return self._bridge(session_id, turn, step, raw)
        decoded = decode_arguments(raw)
        arguments, problem = decoded.value, decoded.problem
        if self.trinket.is_meta(name):
            text = self._meta(session_id, name, arguments if problem is None else raw)
            return ToolCall(step, name, arguments, name, META, text, len(text))
        try:
            spec = self.registry.resolve(name)
        except ToolNotAllowedError as exc:
            self.refuse(session_id, turn, name, str(exc))
            text = (
                f"Error: tool {shown(name)} is not allowed for this agent, so it was refused. {exc}"
            )
            return ToolCall(step, name, arguments, None, REFUSED, text, len(text))
        except UnknownToolError as exc:
            return ToolCall(step, name, arguments, None, UNKNOWN, *self._unknown(name, exc))
        bad = argument_problem(spec, decoded)
        if bad is not None:
            return ToolCall(step, name, arguments, spec.name, INVALID, bad, len(bad))
        return self._execute(session_id, turn, step, name, spec, arguments)

    def _bridge(self, session_id: str, turn: int, step: int, raw: Any) -> ToolCall:
        """``call_tool``: run the named tool as if the model had called it directly, with the
        same allow-list, schema check and errors (a revealed tool is not in ``tools=``)."""
        try:
            name, inner = parse_bridge(raw)
        except MetaToolArgumentError as exc:
            text = f"Error: {exc}"
            return ToolCall(step, CALL_TOOL, raw, None, INVALID, text, len(text))
        return self.run(session_id, turn, step, name, inner)

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
        text = f"Error: there is no tool named {shown(name)}.{hint} {how}"
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
