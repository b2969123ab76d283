"""``tooltray chat --script`` against the scripted server."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import CATALOG, MCP_SERVER, TEST_SETTINGS
from scripted_server import ScriptedServer, call, say

from tooltray.memory.cli.main import cli


@pytest.fixture
def env() -> dict[str, str]:
    return {f"TOOLTRAY_{k.upper()}": str(v) for k, v in TEST_SETTINGS.items()}


def test_script_prints_loaded_tools_calls_and_tokens(
    server: ScriptedServer, db_url: str, tmp_path: Path, env: dict[str, str]
) -> None:
    script = tmp_path / "script.txt"
    script.write_text("Please multiply 17 by 23 for me.\n\nThanks!\n")
    server.extend([call("multiply", {"a": 17, "b": 23}), say("391"), say("Bye.")])
    args = ["chat", "--base-url", server.base_url, "--model", "m", "--db", db_url]
    args += ["--catalog", str(CATALOG), "--script", str(script), "--session", "c1"]
    args += ["--max-tokens", "64"]
    out = CliRunner().invoke(cli, args, env=env)
    assert out.exit_code == 0, out.output
    assert "session c1:" in out.output
    assert 'multiply({"a": 17, "b": 23}) ok' in out.output and "-> 391" in out.output
    assert "assistant: 391" in out.output and "assistant: Bye." in out.output
    assert out.output.count("tool tokens per step:") == 2 and "vs eager" in out.output
    assert all(r["max_tokens"] == 64 for r in server.requests)


def test_json_format_and_text_path(
    server: ScriptedServer, db_url: str, tmp_path: Path, env: dict[str, str]
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["What is 2 plus 3?"]))
    server.extend([say('{"tool": "add", "arguments": {"a": 2, "b": 3}}'), say("5")])
    args = ["chat", "--base-url", server.base_url, "--model", "m", "--db", db_url, "--path"]
    args += ["text", "--catalog", str(CATALOG), "--script", str(script), "--format", "json"]
    out = CliRunner().invoke(cli, args, env=env)
    assert out.exit_code == 0, out.output
    [record] = [json.loads(line) for line in out.output.splitlines()]
    assert record["calls"][0]["tool"] == "add" and record["calls"][0]["result"] == "5"
    assert record["answer"] == "5" and len(record["step_tokens"]) == 2
    assert "tools" not in server.requests[0]


def test_piped_input_with_json_format_is_json_lines_only(
    server: ScriptedServer, db_url: str, env: dict[str, str]
) -> None:
    server.extend([say('{"tool": "add", "arguments": {"a": 2, "b": 3}}'), say("5"), say("Bye.")])
    args = ["chat", "--base-url", server.base_url, "--model", "m", "--db", db_url, "--path"]
    args += ["text", "--catalog", str(CATALOG), "--format", "json"]
    out = CliRunner().invoke(cli, args, env=env, input="What is 2 plus 3?\nThanks\n")
    assert out.exit_code == 0, out.output
    records = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["user"] for r in records] == ["What is 2 plus 3?", "Thanks"]
    assert "you>" not in out.output


def test_a_dead_server_is_one_clear_error(db_url: str, tmp_path: Path, env: dict[str, str]) -> None:
    script = tmp_path / "s.txt"
    script.write_text("hello\n")
    args = ["chat", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--db", db_url]
    args += ["--catalog", str(CATALOG), "--script", str(script)]
    out = CliRunner().invoke(cli, args, env=env)
    assert out.exit_code == 2
    assert "model request at step 0 failed" in out.output


def test_bad_script_file_is_reported(tmp_path: Path, env: dict[str, Any]) -> None:
    script = tmp_path / "s.json"
    script.write_text('{"not": "a list"}')
    args = ["chat", "--base-url", "http://x/v1", "--model", "m", "--script", str(script)]
    args += ["--catalog", str(CATALOG)]
    out = CliRunner().invoke(cli, args, env=env)
    assert out.exit_code == 2 and "JSON list of user messages" in out.output


def test_mcp_servers_join_the_tools(
    server: ScriptedServer, db_url: str, tmp_path: Path, env: dict[str, str]
) -> None:
    script = tmp_path / "s.txt"
    script.write_text("Reverse the word tooltray.\n")
    server.extend([call("reverse_text", {"text": "tooltray"}), say("yartloot")])
    mcp = f"{sys.executable} {MCP_SERVER}"
    args = ["chat", "--base-url", server.base_url, "--model", "m", "--db", db_url]
    args += ["--catalog", str(CATALOG), "--script", str(script), "--mcp", mcp, "--format", "json"]
    out = CliRunner().invoke(cli, args, env=env)
    assert out.exit_code == 0, out.output
    record = json.loads(out.output.splitlines()[-1])
    assert record["calls"][0]["tool"] == "reverse_text"
    assert record["calls"][0]["result"] == "yartloot"


def _clashing_catalog(tmp_path: Path) -> Path:
    catalog = tmp_path / "tools.jsonl"
    row = {"name": "reverse_text", "description": "Reverse words.", "group": "words"}
    catalog.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return catalog


def test_an_mcp_name_clash_says_to_pass_mcp_replace_which_resolves_it(
    server: ScriptedServer, db_url: str, tmp_path: Path, env: dict[str, str]
) -> None:
    script = tmp_path / "s.txt"
    script.write_text("Reverse the word tooltray.\n")
    mcp = f"{sys.executable} {MCP_SERVER}"
    args = ["chat", "--base-url", server.base_url, "--model", "m", "--db", db_url, "--catalog"]
    args += [str(_clashing_catalog(tmp_path)), "--script", str(script), "--mcp", mcp]
    clash = CliRunner().invoke(cli, args, env=env)
    assert clash.exit_code == 2 and "pass --mcp-replace" in clash.output.lower()
    assert len(clash.output.strip().splitlines()) == 1, clash.output
    server.extend([call("reverse_text", {"text": "tooltray"}), say("yartloot")])
    out = CliRunner().invoke(cli, [*args, "--mcp-replace", "--format", "json"], env=env)
    assert out.exit_code == 0, out.output
    record = json.loads(out.output.splitlines()[-1])
    assert record["calls"][0]["tool"] == "reverse_text"
    assert record["calls"][0]["result"] == "yartloot"  # the server ran it: the stand-in cannot


def test_mcp_prefix_names_the_servers_tools_by_server(
    server: ScriptedServer, db_url: str, tmp_path: Path, env: dict[str, str]
) -> None:
    script = tmp_path / "s.txt"
    script.write_text("Reverse the word tooltray.\n")
    server.extend([call("mcp__mathtext__reverse_text", {"text": "tooltray"}), say("yartloot")])
    mcp = f"{sys.executable} {MCP_SERVER}"
    args = ["chat", "--base-url", server.base_url, "--model", "m", "--db", db_url, "--catalog"]
    args += [str(CATALOG), "--script", str(script), "--mcp", mcp, "--mcp-prefix"]
    out = CliRunner().invoke(cli, [*args, "--format", "json"], env=env)
    assert out.exit_code == 0, out.output
    record = json.loads(out.output.splitlines()[-1])
    assert record["calls"][0]["tool"] == "mcp__mathtext__reverse_text"
    assert record["calls"][0]["result"] == "yartloot"


def test_mcp_prefix_keeps_both_sides_of_a_clash(
    server: ScriptedServer, db_url: str, tmp_path: Path, env: dict[str, str]
) -> None:
    """The catalog's reverse_text stays; the server's is callable by its prefixed name (two
    servers' ``server__tool`` names no longer clash once the prefix is kept)."""
    script = tmp_path / "s.txt"
    script.write_text("Reverse the word tooltray.\n")
    server.extend([call("mcp__mathtext__reverse_text", {"text": "tooltray"}), say("yartloot")])
    mcp = f"{sys.executable} {MCP_SERVER}"
    args = ["chat", "--base-url", server.base_url, "--model", "m", "--db", db_url, "--catalog"]
    args += [str(_clashing_catalog(tmp_path)), "--script", str(script), "--mcp", mcp]
    out = CliRunner().invoke(cli, [*args, "--mcp-prefix", "--format", "json"], env=env)
    assert out.exit_code == 0, out.output
    record = json.loads(out.output.splitlines()[-1])
    assert record["calls"][0]["tool"] == "mcp__mathtext__reverse_text"
    assert record["calls"][0]["result"] == "yartloot"  # the server ran it
    offered = server.tool_names(0)
    assert "reverse_text" in offered and "mcp__mathtext__reverse_text" in offered


def test_a_command_that_is_not_an_mcp_server_is_one_line(
    db_url: str, tmp_path: Path, env: dict[str, str]
) -> None:
    args = ["chat", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--db", db_url]
    out = CliRunner().invoke(cli, [*args, "--catalog", str(CATALOG), "--mcp", "ls"], env=env)
    assert out.exit_code == 2
    assert out.output.strip().splitlines() == [
        "error: MCP server 'ls' did not start (Connection closed): check that the command runs "
        "on its own and speaks MCP over stdio, e.g. --mcp 'mcp-server-git --repository .'."
    ]
