"""The config file, the naming of clashing tools, and bad input on the command line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import types

from tooltray.memory.cli.main import cli
from tooltray.memory.gateway import GatewayCatalog, GatewayConfigError, parse_config
from tooltray.tools.registry import ToolRegistry


def tool(name: str) -> types.Tool:
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    return types.Tool(name=name, description=f"{name} things.", input_schema=schema)


def config(**tooltray: str) -> dict[str, object]:
    return {
        "mcpServers": {
            "alpha": {"command": "a", "alwaysLoad": True},
            "beta": {"url": "http://127.0.0.1:1/mcp"},
        },
        "tooltray": tooltray,
    }


def test_clashing_names_and_meta_tool_names_get_the_server_prefix() -> None:
    registry = ToolRegistry()
    catalog = GatewayCatalog(parse_config(config()), registry)
    catalog.update("alpha", [tool("status"), tool("fallback"), tool("only_alpha")])
    catalog.update("beta", [tool("status"), tool("only_beta")])
    names = [s.name for s in registry.allowed()]
    assert names == ["alpha_status", "alpha_fallback", "only_alpha", "beta_status", "only_beta"]
    assert catalog.routes["beta_status"].server == "beta"
    assert catalog.routes["beta_status"].tool == "status"
    assert {s.name for s in registry.allowed() if s.pinned} == {
        "alpha_status",
        "alpha_fallback",
        "only_alpha",
    }
    listed = catalog.definition("alpha_status")
    assert listed is not None and listed.input_schema == tool("status").input_schema


def test_prefix_always_and_a_server_that_changes_its_tools() -> None:
    registry = ToolRegistry()
    catalog = GatewayCatalog(parse_config(config(prefix="always")), registry)
    assert catalog.update("beta", [tool("one"), tool("two")])
    assert not catalog.update("beta", [tool("one"), tool("two")])  # same list: no change
    assert catalog.update("beta", [tool("two")])
    assert [s.name for s in registry.allowed()] == ["beta_two"]
    assert catalog.route("beta_two") is not None and catalog.route("beta_one") is None


@pytest.mark.parametrize(
    ("data", "fix"),
    [
        ({"servers": {}}, '{"mcpServers"'),
        ({"mcpServers": {}}, "add at least one"),
        ({"mcpServers": {"a": {"command": "x", "url": "http://h/mcp"}}}, "exactly one of"),
        ({"mcpServers": {"a": {"command": "x", "argz": []}}}, "unknown keys ['argz']"),
        ({"mcpServers": {"a": {"command": "x", "args": "-v"}}}, "list of strings"),
        ({"mcpServers": {"a\nb": {"command": "x"}}}, "one line"),
        ({**config(prefixFormat="{server}-tool")}, "must contain {server} and {tool}"),
        ({**config(prefix="sometimes")}, "'clash', 'always' or 'never'"),
        ({**config(reveal="append")}, "'reveal' must be 'list' or 'bridge'"),
    ],
)
def test_bad_configs_name_the_fix(data: dict[str, object], fix: str) -> None:
    with pytest.raises(GatewayConfigError) as err:
        parse_config(data, "servers.json")
    assert fix in str(err.value) and "servers.json" in str(err.value)


def test_cli_bad_input_is_one_line_and_exit_2(write_config: Callable[..., Path]) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["mcp", "serve", "--config", "nope.json"])
    assert missing.exit_code == 2 and "cannot read it" in missing.output
    bad = write_config({}, "bad.json")
    bad.write_text("{not json", encoding="utf-8")
    garbled = runner.invoke(cli, ["mcp", "serve", "--config", str(bad)])
    assert garbled.exit_code == 2 and "not valid JSON (line 1" in garbled.output
    good = write_config(json.loads(json.dumps(config())))
    port = runner.invoke(cli, ["mcp", "serve", "--config", str(good), "--http", "localhost"])
    assert port.exit_code == 2 and "use HOST:PORT" in port.output
    reveal = runner.invoke(cli, ["mcp", "serve", "--config", str(good), "--reveal", "append"])
    assert reveal.exit_code == 2 and "'list', 'bridge'" in reveal.output
    for result in (missing, garbled, port):
        assert len(result.output.strip().splitlines()) == 1


def test_the_readme_sample_config_is_valid() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## MCP gateway", 1)[1].split("\n## ", 1)[0]
    sample = section.split("```json\n", 1)[1].split("```", 1)[0]
    parsed = parse_config(json.loads(sample), "README")
    assert [s.name for s in parsed.servers] == ["time", "git", "docs"]
    assert parsed.servers[0].always_load and parsed.servers[2].url is not None
    assert parsed.reveal == "list" and parse_config(config(reveal="bridge")).reveal == "bridge"


def test_a_server_named_as_written_is_its_bundle_and_prefixes_sanitised() -> None:
    parsed = parse_config({"mcpServers": {"Ant Design Components": {"command": "x"}}}, "s.json")
    assert parsed.servers[0].name == "Ant Design Components"
    assert parsed.exposed_name("Ant Design Components", "button") == "Ant_Design_Components_button"
