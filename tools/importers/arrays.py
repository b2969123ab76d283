"""Read a catalog file that is one JSON document of tools, in the shapes users already hold.

Besides ``tools.jsonl``, a catalog file may be:

- an OpenAI ``tools=`` array (Chat Completions ``{"type": "function", "function": {...}}`` or
  Responses ``{"type": "function", "name": ...}`` items), via :func:`from_openai`;
- an Anthropic ``tools`` array (``{"name", "description", "input_schema"}``; ``cache_control``
  and ``type: "custom"`` are request options and are dropped);
- an MCP ``tools/list`` result: ``{"tools": [...]}``, the JSON-RPC response around it
  (``{"result": {"tools": [...]}}``) or the bare array of ``{"name", "inputSchema"}`` items.

Each item is recognised on its own, so a mixed array is read too. None of these formats has a
bundle field, so bundles are inferred from the names (:mod:`tooltray.tools.grouping`); use
``tools.jsonl`` with ``group`` to choose them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tooltray.tools.errors import DuplicateToolError, ToolSpecError, TooltrayError, shown
from tooltray.tools.importers.mcp import from_mcp
from tooltray.tools.importers.openai import from_openai
from tooltray.tools.names import clash_key
from tooltray.tools.spec import ToolSpec

_ANTHROPIC_OPTIONS = ("cache_control", "type")


def tool_array(text: str) -> list[Any] | None:
    """The tools of a whole-file JSON document, or ``None`` when the file is not one (jsonl).

    A one-line ``tools.jsonl`` parses as a single tool object, which has no ``tools`` key, so it
    stays a jsonl file.
    """
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):  # jsonl, or too deep: read line by line
        return None
    if isinstance(data, Mapping) and isinstance(data.get("result"), Mapping):
        data = data["result"]
    if isinstance(data, Mapping) and isinstance(data.get("tools"), list):
        data = data["tools"]
    return data if isinstance(data, list) else None


def spec_of(item: Any, source: str) -> ToolSpec:
    """One array item as a spec, whichever of the three formats it is in."""
    if not isinstance(item, Mapping):
        raise ToolSpecError(f"expected a tool object, got {type(item).__name__}")
    if "inputSchema" in item:
        return from_mcp(item, source=source)
    if "input_schema" in item:
        kind = item.get("type", "custom")
        if kind != "custom":
            raise ToolSpecError(
                f"Anthropic tool of type {shown(kind)} is a server tool: it has no schema to "
                "import; pass it to the API directly"
            )
        fields = {k: v for k, v in item.items() if k not in _ANTHROPIC_OPTIONS}
        return from_mcp(fields, source=source)
    return from_openai(item, source=source)


def read_tool_array(file: Path, items: list[Any], source: str) -> list[ToolSpec]:
    """The specs of ``items``, each error naming the file and the item's index.

    Raises:
        ToolSpecError: an item in none of the formats, or with a bad name or schema.
        DuplicateToolError: two items define the same (or prefix-equivalent) name.
    """
    specs: list[ToolSpec] = []
    seen: dict[str, int] = {}
    for number, item in enumerate(items):
        try:
            spec = spec_of(item, source)
        except TooltrayError as exc:
            raise ToolSpecError(f"{file} item {number}: {str(exc).rstrip('.')}.") from None
        first = seen.setdefault(clash_key(spec.name), number)
        if first != number:
            raise DuplicateToolError(
                f"{file} item {number} (tool {spec.name!r}): the name clashes with item {first}; "
                "rename one."
            )
        specs.append(spec)
    if not specs:
        raise ToolSpecError(f"{file}: the tools array is empty.")
    return specs
