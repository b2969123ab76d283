"""Import tools listed by an MCP server (``tools/list``), as dicts or ``mcp.types.Tool`` objects.

With ``server=`` the tools join a bundle named after the server and carry source
``mcp:<server>``; ``prefix=True`` also names them ``mcp__<server>__<tool>`` (the convention
agents use to keep several servers apart). The registry resolves both spellings either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tooltray.tools.errors import ToolSpecError, shown
from tooltray.tools.importers.openai import spec_from_fields
from tooltray.tools.names import sanitize_name
from tooltray.tools.spec import ToolSpec, check_bundle

# MCP fields that describe display or behaviour, not the call; accepted and not rendered.
_MCP_EXTRA = frozenset(
    {"title", "outputSchema", "output_schema", "annotations", "icons", "execution", "_meta", "meta"}
)
_KEYS = frozenset({"name", "description", "parameters"})


def _as_dict(tool: Any) -> Mapping[str, Any]:
    if isinstance(tool, Mapping):
        return tool
    dump = getattr(tool, "model_dump", None)
    if callable(dump):
        data = dump(by_alias=True, exclude_none=True)
        if isinstance(data, Mapping):
            return data
    raise ToolSpecError(
        f"MCP tool must be a dict or an mcp.types.Tool, got {type(tool).__name__}; "
        "pass the items of `await session.list_tools()`.tools."
    )


def from_mcp(
    tool: Any, *, server: str | None = None, prefix: bool = False, source: str | None = None
) -> ToolSpec:
    """Build a :class:`ToolSpec` from one MCP tool definition.

    Args:
        tool: ``{"name", "description", "inputSchema"}`` or an ``mcp.types.Tool``.
        server: the server's name; becomes the bundle and ``source="mcp:<server>"``.
        prefix: name the tool ``mcp__<server>__<name>`` (needs ``server``).
        source: overrides the source label.

    Raises:
        ToolSpecError: missing name or inputSchema, bad schema, bad server name.
    """
    data = dict(_as_dict(tool))
    label = f"MCP tool {shown(data.get('name'))}" + (
        f" from server {shown(server)}" if server else ""
    )
    if "inputSchema" not in data and "input_schema" not in data:
        raise ToolSpecError(f"{label}: missing 'inputSchema' (MCP requires one; use {{}}).")
    fields = {k: v for k, v in data.items() if k not in _MCP_EXTRA}
    schema, alt = fields.pop("inputSchema", None), fields.pop("input_schema", None)
    fields["parameters"] = schema if schema is not None else alt
    if server is not None:
        check_bundle(server, "MCP server (bundle)")
    if prefix:
        if server is None:
            raise ToolSpecError(f"{label}: prefix=True needs server='...'.")
        fields["name"] = f"mcp__{sanitize_name(server)}__{fields.get('name')}"
    origin = source or (f"mcp:{server}" if server else "mcp")
    return spec_from_fields(fields, label, _KEYS, bundle=server, source=origin)


def from_mcp_list(
    tools: Iterable[Any], *, server: str | None = None, prefix: bool = False
) -> list[ToolSpec]:
    """:func:`from_mcp` over a whole ``tools/list`` result, in order."""
    return [from_mcp(t, server=server, prefix=prefix) for t in tools]
