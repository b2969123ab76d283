"""from_openai (chat, responses, bare) and from_mcp (dicts and mcp.types.Tool)."""

from __future__ import annotations

from typing import Any

import mcp.types
import pytest

from tooltray.tools.errors import ToolSpecError
from tooltray.tools.importers.mcp import from_mcp, from_mcp_list
from tooltray.tools.importers.openai import from_openai
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import openai_chat_tool, openai_responses_tool
from tooltray.tools.sources.mcp import server_name

PARAMS = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
FN = {"name": "search", "description": "Search things.", "parameters": PARAMS}


@pytest.mark.parametrize(
    "shape",
    [
        {"type": "function", "function": {**FN, "strict": True}},
        {"type": "function", **FN, "strict": False},
        FN,
    ],
)
def test_openai_shapes(shape: dict[str, Any]) -> None:
    spec = from_openai(shape, bundle="web")
    assert (spec.name, spec.description, spec.bundle, spec.source) == (
        "search",
        "Search things.",
        "web",
        "openai",
    )
    assert spec.parameters == PARAMS


def test_openai_round_trips_through_renderers() -> None:
    spec = from_openai(FN)
    assert from_openai(openai_chat_tool(spec)) == spec
    assert from_openai(openai_responses_tool(spec)) == spec


def test_openai_without_parameters_means_no_arguments() -> None:
    spec = from_openai({"name": "now", "description": "Time."})
    assert spec.parameters == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("tool", "fragment"),
    [
        ({"type": "web_search"}, "type 'web_search'"),
        ({"type": "function", "function": FN, "extra": 1}, "unexpected keys ['extra']"),
        ({"type": "function", "function": "nope"}, "'function' must be an object"),
        ({**FN, "examples": []}, "unknown keys ['examples']"),
        ({"description": "x"}, "missing 'name'"),
        ({**FN, "name": "bad name"}, "Invalid tool name 'bad name'"),
        ({**FN, "parameters": {"type": "array"}}, "must have type 'object'"),
        ({**FN, "parameters": {"type": "object", "properties": {"a": {"type": "str"}}}}, "'str'"),
        ({**FN, "description": 5}, "'description' must be a string"),
        ("search", "must be a dict"),
    ],
)
def test_openai_bad_input(tool: Any, fragment: str) -> None:
    with pytest.raises(ToolSpecError) as err:
        from_openai(tool)
    assert fragment in str(err.value)


def test_openai_empty_description_warns() -> None:
    with pytest.warns(UserWarning, match="empty description"):
        from_openai({"name": "blank", "parameters": {}})


MCP_DICT = {"name": "create_issue", "description": "Open an issue.", "inputSchema": PARAMS}


def test_mcp_dict_and_server_bundle() -> None:
    spec = from_mcp(MCP_DICT, server="github")
    assert (spec.name, spec.bundle, spec.source) == ("create_issue", "github", "mcp:github")
    assert from_mcp(MCP_DICT).source == "mcp" and from_mcp(MCP_DICT).bundle is None
    prefixed = from_mcp(MCP_DICT, server="github", prefix=True)
    assert prefixed.name == "mcp__github__create_issue"


def test_a_server_named_as_its_authors_name_it_is_its_bundle() -> None:
    spec = from_mcp(MCP_DICT, server="Ant Design Components", prefix=True)
    assert spec.bundle == "Ant Design Components"  # shown as written in the menu
    assert spec.name == "mcp__Ant_Design_Components__create_issue"  # a name needs the pattern
    assert server_name("  Ant Design\tComponents ") == "Ant Design Components"


def test_mcp_types_tool_object() -> None:
    wire = {
        "name": "read_file",
        "title": "Read file",
        "description": "Read a file.",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    }
    tool = mcp.types.Tool.model_validate(wire)  # as `session.list_tools()` returns it
    spec = from_mcp(tool, server="fs")
    assert spec.name == "read_file" and spec.bundle == "fs"
    assert spec.parameters["properties"] == {"path": {"type": "string"}}
    specs = from_mcp_list([tool, MCP_DICT], server="fs", prefix=True)
    registry = ToolRegistry()
    for s in specs:
        registry.register(s)
    assert registry.resolve("read_file").name == "mcp__fs__read_file"


@pytest.mark.parametrize(
    ("tool", "kw", "fragment"),
    [
        ({"name": "x", "description": "d"}, {}, "missing 'inputSchema'"),
        (MCP_DICT, {"server": "bad\nserver"}, "Invalid MCP server (bundle) name"),
        (MCP_DICT, {"prefix": True}, "prefix=True needs server"),
        ({**MCP_DICT, "inputSchema": {"type": "string"}}, {}, "must have type 'object'"),
        ({**MCP_DICT, "weird": 1}, {}, "unknown keys ['weird']"),
        (3.5, {}, "dict or an mcp.types.Tool"),
    ],
)
def test_mcp_bad_input(tool: Any, kw: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ToolSpecError) as err:
        from_mcp(tool, **kw)
    assert fragment in str(err.value)
