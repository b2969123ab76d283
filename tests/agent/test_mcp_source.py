"""A real MCP server over stdio: listed, registered, called from synchronous code, closed."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import MCP_SERVER

from tooltray.tools.registry import ToolRegistry
from tooltray.tools.sources.mcp import MCPSource, MCPSourceError, MCPToolError


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MCPSource]:
    log = (tmp_path_factory.mktemp("mcp") / "stderr.log").open("w")
    with MCPSource([sys.executable, str(MCP_SERVER)], errlog=log) as src:
        yield src
    log.close()


def test_tools_become_specs_in_the_server_bundle(source: MCPSource) -> None:
    assert source.name == "mathtext"
    assert [s.name for s in source.specs] == ["add_numbers", "reverse_text", "long_report"]
    assert {s.bundle for s in source.specs} == {"mathtext"}
    assert {s.source for s in source.specs} == {"mcp:mathtext"}
    assert source.specs[0].parameters["required"] == ["a", "b"]


def test_registered_executors_call_the_server(source: MCPSource) -> None:
    registry = ToolRegistry()
    source.register(registry)
    assert [b.name for b in registry.bundles()] == ["mathtext"]
    assert registry.executor("add_numbers")(a=2, b=3.5) == "5.5"
    assert registry.executor("reverse_text")(text="abc") == "cba"
    assert len(registry.executor("long_report")(lines=50).splitlines()) == 50


def test_tool_errors_are_raised_with_the_server_text(source: MCPSource) -> None:
    with pytest.raises(MCPToolError, match="add_numbers"):
        source.call("add_numbers", {"a": "not a number"})


def test_prefixed_names_call_the_original_tool(tmp_path: Path) -> None:
    with (
        (tmp_path / "err.log").open("w") as log,
        MCPSource([sys.executable, str(MCP_SERVER)], name="calc", prefix=True, errlog=log) as src,
    ):
        registry = ToolRegistry()
        src.register(registry)
        assert registry.resolve("mcp__calc__reverse_text").bundle == "calc"
        assert registry.executor("mcp__calc__reverse_text")(text="xy") == "yx"
    with pytest.raises(MCPSourceError, match="not started"):
        src.call("mcp__calc__reverse_text", {"text": "a"})


def test_a_command_that_is_not_a_server_fails_clearly(tmp_path: Path) -> None:
    with (tmp_path / "err.log").open("w") as log:
        source = MCPSource([sys.executable, "-c", "print('hello')"], timeout=10, errlog=log)
        with pytest.raises(MCPSourceError, match="stdio"):
            source.start()
        source.close()
    with pytest.raises(MCPSourceError, match="not started"):
        source.call("anything", {})
