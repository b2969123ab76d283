"""MCP tools run through the agent loop like any other tool."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import catalog
from conftest import MCP_SERVER
from scripted_server import ScriptedServer, call, say

from tooltray.tools.sources.mcp import MCPSource


def test_mcp_tools_execute_through_the_loop(
    make_agent: Any, server: ScriptedServer, tmp_path: Path
) -> None:
    registry = catalog.build_registry()
    with (
        (tmp_path / "mcp.log").open("w") as log,
        MCPSource([sys.executable, str(MCP_SERVER)], errlog=log) as source,
    ):
        source.register(registry)
        agent = make_agent(registry)
        server.extend(
            [
                call("load_tools", {"tools": ["mathtext"]}),
                call("add_numbers", {"a": 2, "b": 3}),
                call("reverse_text", {"text": "tooltray"}),
                call("add_numbers", {"a": "two"}),
                say("5, and yartloot."),
            ]
        )
        result = agent.run_turn("m1", [], "Add 2 and 3, then reverse the word tooltray.")
    assert {"add_numbers", "reverse_text", "long_report"} <= set(server.tool_names(1))
    assert [(c.name, c.status, c.result) for c in result.calls[1:3]] == [
        ("add_numbers", "ok", "5"),
        ("reverse_text", "ok", "yartloot"),
    ]
    assert result.calls[3].status == "invalid"
    assert "mathtext" in agent.trinket.catalog.menu()
