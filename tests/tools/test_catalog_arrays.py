"""A catalog file may be an OpenAI tools= array, an Anthropic tools array or an MCP tools/list
result, as well as tools.jsonl; each is read by the registry and by the CLI's --catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tooltray.memory.cli.main import cli
from tooltray.tools.errors import DuplicateToolError, ToolSpecError
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import render_native

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = {"name": "get_weather", "description": "Weather for a city.", "parameters": SCHEMA}
TIME = {"name": "get_time", "description": "The time in a zone.", "parameters": {}}
OPENAI_CHAT = [{"type": "function", "function": WEATHER}, {"type": "function", "function": TIME}]
OPENAI_RESPONSES = [{"type": "function", **WEATHER, "strict": True}, {"type": "function", **TIME}]
ANTHROPIC = [
    {"name": "get_weather", "description": "Weather for a city.", "input_schema": SCHEMA},
    {
        "name": "get_time",
        "description": "The time in a zone.",
        "input_schema": {"type": "object"},
        "cache_control": {"type": "ephemeral"},
    },
]
MCP_TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather for a city.",
        "inputSchema": SCHEMA,
        "annotations": {"readOnlyHint": True},
    },
    {"name": "get_time", "description": "The time in a zone.", "inputSchema": {"type": "object"}},
]


def _write(tmp_path: Path, data: Any, name: str = "tools.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "data",
    [
        OPENAI_CHAT,
        OPENAI_RESPONSES,
        ANTHROPIC,
        {"tools": MCP_TOOLS},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": MCP_TOOLS, "nextCursor": None}},
        MCP_TOOLS,
    ],
    ids=["openai-chat", "openai-responses", "anthropic", "mcp-result", "mcp-jsonrpc", "mcp-array"],
)
def test_each_format_gives_the_same_tools(tmp_path: Path, data: Any) -> None:
    registry = ToolRegistry.from_catalog(_write(tmp_path, data))
    specs = registry.allowed()
    assert [s.name for s in specs] == ["get_weather", "get_time"]
    assert render_native("openai", specs[:1])[0]["function"]["parameters"] == SCHEMA
    assert specs[0].description == "Weather for a city."


def test_the_cli_reads_an_openai_array(tmp_path: Path) -> None:
    path = _write(tmp_path, OPENAI_CHAT)
    result = CliRunner().invoke(
        cli, ["catalog", "show", "--catalog", str(path), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    assert [row["name"] for row in json.loads(result.output)] == ["get_weather", "get_time"]


@pytest.mark.parametrize(
    ("data", "error", "fragment"),
    [
        (
            [{"type": "web_search_20250305", "name": "web_search", "input_schema": {}}],
            ToolSpecError,
            "item 0: Anthropic tool of type 'web_search_20250305' is a server tool",
        ),
        (
            [WEATHER, {"type": "function", "function": WEATHER}],
            DuplicateToolError,
            "item 1 (tool 'get_weather'): the name clashes with item 0",
        ),
        ([WEATHER, 3], ToolSpecError, "item 1: expected a tool object, got int"),
        ({"tools": []}, ToolSpecError, "the tools array is empty"),
        ([{"name": "bad name!", "inputSchema": {}}], ToolSpecError, "item 0: "),
    ],
)
def test_bad_items_are_named_by_index(
    tmp_path: Path, data: Any, error: type[Exception], fragment: str
) -> None:
    with pytest.raises(error, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        ToolRegistry.from_catalog(_write(tmp_path, data))


def test_a_one_line_jsonl_file_stays_a_catalog(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({**WEATHER, "group": "weather"}) + "\n", encoding="utf-8")
    registry = ToolRegistry.from_catalog(path)
    assert [b.name for b in registry.bundles()] == ["weather"]
