"""The meta-tools the model uses to manage its own tools, and tolerant parsing of their arguments.

Models send garbage: a string where a list belongs, JSON inside a string, a comma-separated list,
unknown keys. Parsing accepts every reasonable shape and otherwise raises
:class:`~tooltray.tools.errors.MetaToolArgumentError` with a message the model can act on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tooltray.tools.arguments import NOT_JSON, NOT_OBJECT, TOO_DEEP, decode_arguments
from tooltray.tools.errors import MetaToolArgumentError, shown
from tooltray.tools.spec import ToolSpec

LOAD_TOOLS = "load_tools"
UNLOAD_TOOLS = "unload_tools"
FALLBACK = "fallback"
READ_RESULT = "read_result"
META_TOOL_NAMES = (LOAD_TOOLS, UNLOAD_TOOLS, FALLBACK, READ_RESULT)
CALL_TOOL = "call_tool"
"""The bridge (``reveal = "append"`` on native paths): calls a tool revealed at the end of the
context, which is not in ``tools=``. Not a meta-tool: the call runs the named tool."""
MAX_ITEMS = 64
MAX_ITEM_CHARS = 200
_BARE_NAMES = re.compile(r"\s*[\w.-]+\s*([,;]\s*[\w.-]+\s*)*")
SHAPES = {
    "load_tools": '{"tools": ["name or bundle"]} or {"query": "what you need to do"}',
    "unload_tools": '{"tools": ["name"]}',
    "read_result": '{"handle": "r-...", "offset": 0}',
    "call_tool": '{"name": "tool_name", "arguments": {...}}',
}

_NAMES_SCHEMA = {
    "type": "array",
    "items": {"type": "string"},
    "description": "Tool names or bundle names.",
}


def meta_tool_specs(*, with_read_result: bool = True) -> list[ToolSpec]:
    """The meta-tools in the fixed order they lead every ``tools=`` list."""
    specs = [
        ToolSpec(
            name=LOAD_TOOLS,
            description=(
                "Load more tools for this conversation. Pass tool names or bundle names from "
                "the bundle menu in `tools`, or describe the task in `query`; loaded tools are "
                "callable on your next step."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "tools": _NAMES_SCHEMA,
                    "query": {"type": "string", "description": "What you need to do."},
                },
            },
            source="meta",
        ),
        ToolSpec(
            name=UNLOAD_TOOLS,
            description="Unload tools you no longer need, to keep the tool list short.",
            parameters={
                "type": "object",
                "properties": {"tools": _NAMES_SCHEMA},
                "required": ["tools"],
            },
            source="meta",
        ),
        ToolSpec(
            name=FALLBACK,
            description=(
                "Make every available tool callable for this turn only, when you cannot find "
                "the tool you need. Use load_tools first when you know the name."
            ),
            parameters={
                "type": "object",
                "properties": {"reason": {"type": "string", "description": "Why."}},
            },
            source="meta",
        ),
    ]
    if with_read_result:
        specs.append(
            ToolSpec(
                name=READ_RESULT,
                description="Read more of a long tool result that was shortened with a handle.",
                parameters={
                    "type": "object",
                    "properties": {
                        "handle": {"type": "string", "description": "The result handle."},
                        "offset": {"type": "integer", "minimum": 0, "default": 0},
                    },
                    "required": ["handle"],
                },
                source="meta",
            )
        )
    return specs


def shown_meta_specs(reveal: str, deferring: bool = False) -> list[ToolSpec]:
    """The meta-tools ``tools=`` leads with. Revealing by appending shows only ``load_tools``,
    ``fallback`` and the ``call_tool`` bridge: unloading saves nothing while the prefix stays
    fixed, and ``read_result`` is named in every shortened result, so both are reached through
    the bridge (the fixed part every call pays shrinks by 139 tokens). Where the provider
    defers tools (``deferring``) there is no bridge: it makes revealed tools callable itself,
    so ``read_result`` is shown in its place."""
    specs = meta_tool_specs()
    if reveal != "append":
        return specs
    if deferring:
        return [s for s in specs if s.name != UNLOAD_TOOLS]
    return [s for s in specs if s.name in (LOAD_TOOLS, FALLBACK)] + [bridge_spec()]


def bridge_spec() -> ToolSpec:
    """``call_tool``: byte-stable in ``tools=``, it reaches every tool revealed after it."""
    return ToolSpec(
        name=CALL_TOOL,
        description="Call a tool listed in the conversation but not here (also read_result).",
        parameters={
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "arguments": {"type": "object", "additionalProperties": True},
            },
            "required": ["name"],
        },
        source="meta",
    )


def parse_bridge(arguments: Any) -> tuple[str, Any]:
    """``call_tool`` arguments as ``(tool name, its raw arguments)``.

    Raises:
        MetaToolArgumentError: no usable ``name``, or ``call_tool`` naming itself.
    """
    args = _as_dict(arguments, CALL_TOOL)
    name = args.get("name", args.get("tool"))
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_ITEM_CHARS:
        raise MetaToolArgumentError(
            "call_tool needs the revealed tool's `name` and its `arguments`: e.g. "
            'call_tool({"name": "get_weather", "arguments": {"city": "Oslo"}}).'
        )
    if name.strip() == CALL_TOOL:
        raise MetaToolArgumentError(
            "call_tool calls another tool: give that tool's name in `name`."
        )
    return name.strip(), args.get("arguments", {})


@dataclass(frozen=True)
class LoadRequest:
    """Parsed ``load_tools`` arguments: names (tools or bundles) and an optional search query."""

    names: tuple[str, ...]
    query: str | None


def _as_dict(arguments: Any, tool: str) -> dict[str, Any]:
    decoded = decode_arguments(arguments)
    if decoded.fault == NOT_JSON:
        if _BARE_NAMES.fullmatch(arguments):  # "calendar, weather": names, not JSON
            return {"tools": arguments}
        raise MetaToolArgumentError(
            f"{tool}: the arguments are not JSON (got {shown(arguments, 60)}); send a JSON "
            f"object like {SHAPES.get(tool, '{}')}."
        )
    if decoded.fault == TOO_DEEP:
        raise MetaToolArgumentError(
            f"{tool}: the arguments are nested too deeply to read; send a flat object like "
            '{"tools": ["name"]}.'
        )
    if decoded.fault == NOT_OBJECT:
        raise MetaToolArgumentError(
            f"{tool} takes a JSON object of arguments, got {type(decoded.value).__name__}: "
            f'call it like {tool}({{"tools": ["name"]}}).'
        )
    return dict(decoded.value)


def _as_names(value: Any, tool: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [part for part in value.replace(";", ",").split(",")]
    if not isinstance(value, (list, tuple)):
        raise MetaToolArgumentError(
            f"{tool}: `tools` must be a list of names, got {type(value).__name__}: "
            'pass ["tool_a", "bundle_b"].'
        )
    names: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise MetaToolArgumentError(
                f"{tool}: every entry of `tools` must be a string name, got {shown(item, 60)}."
            )
        item = item.strip()
        if len(item) > MAX_ITEM_CHARS:
            raise MetaToolArgumentError(
                f"{tool}: a name of {len(item)} characters is too long; names have at most 64."
            )
        if item and item not in names:
            names.append(item)
    if len(names) > MAX_ITEMS:
        raise MetaToolArgumentError(f"{tool}: at most {MAX_ITEMS} names per call.")
    return tuple(names)


def parse_load(arguments: Any) -> LoadRequest:
    """Parse ``load_tools`` arguments; needs at least one name or a query."""
    args = _as_dict(arguments, LOAD_TOOLS)
    names = _as_names(args.get("tools", args.get("names", args.get("bundles"))), LOAD_TOOLS)
    query = args.get("query")
    if query is not None and not isinstance(query, str):
        raise MetaToolArgumentError("load_tools: `query` must be a string describing the task.")
    query = (query or "").strip()[:1000] or None
    if not names and not query:
        raise MetaToolArgumentError(
            "load_tools needs `tools` (names from the bundle menu) or a `query`: e.g. "
            'load_tools({"tools": ["calendar"]}) or load_tools({"query": "book a flight"}).'
        )
    return LoadRequest(names=names, query=query)


def parse_unload(arguments: Any) -> tuple[str, ...]:
    """Parse ``unload_tools`` arguments; needs at least one name."""
    names = _as_names(_as_dict(arguments, UNLOAD_TOOLS).get("tools"), UNLOAD_TOOLS)
    if not names:
        raise MetaToolArgumentError(
            'unload_tools needs `tools`: e.g. unload_tools({"tools": ["weather_forecast"]}).'
        )
    return names


def parse_read_result(arguments: Any) -> tuple[str, int]:
    """Parse ``read_result`` arguments into (handle, offset)."""
    args = _as_dict(arguments, READ_RESULT)
    handle = args.get("handle", args.get("tools"))
    if not isinstance(handle, str) or not handle.strip():
        raise MetaToolArgumentError(
            "read_result needs the `handle` shown in the shortened result: "
            'read_result({"handle": "r-...", "offset": 0}).'
        )
    if len(handle.strip()) > MAX_ITEM_CHARS:
        raise MetaToolArgumentError(
            f"read_result: a handle of {len(handle.strip())} characters cannot be one; copy the "
            'short `handle` shown in the shortened result, e.g. read_result({"handle": "r-..."}).'
        )
    offset = args.get("offset", 0)
    try:
        offset = int(offset)
    except (TypeError, ValueError, OverflowError):
        raise MetaToolArgumentError("read_result: `offset` must be a whole number.") from None
    return handle.strip(), max(0, offset)
