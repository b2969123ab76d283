"""Real MCP servers' tool lists as dumped by ``bench/mcp_servers.py``, for retrieval tests."""

from __future__ import annotations

import json
from pathlib import Path

from tooltray.tools.spec import ToolSpec

SERVERS = Path(__file__).resolve().parents[1] / "bench" / "data" / "mcp" / "servers"


def servers_catalog(*servers: str) -> list[ToolSpec]:
    """Every tool the named servers listed, bundled by server."""
    specs = []
    for server in servers:
        for tool in json.loads((SERVERS / f"{server}.json").read_text("utf-8"))["tools"]:
            schema = tool.get("inputSchema") or {"type": "object"}
            text = tool.get("description") or ""
            specs.append(
                ToolSpec(name=tool["name"], description=text, parameters=schema, bundle=server)
            )
    return specs
