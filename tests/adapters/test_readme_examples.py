"""Every ```python block of the README runs as printed, in order, in one namespace.

A reader pastes them one after another into one interpreter, so the later blocks use the
registry and trinket the first one built. The model is the scripted server over real HTTP on
loopback; the blocks reach it through ``OPENAI_BASE_URL`` as any OpenAI-compatible server, and
``TOOLTRAY_OPENING=share`` with ``TOOLTRAY_ACTIVATION_SHARE=0`` makes the trinket select (and
offer the meta-tools) even on this one-tool registry, which the priced opening would load whole,
as the README's Configuration section describes. The loaded tool is revealed by appending (the
default), so the model calls it through ``call_tool``. The MCP block starts the installed
``mcp-server-time``; the Google ADK block's model is ADK's own ``OpenAILlm``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from scripted_server import ScriptedServer, call, say

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.+?)\n```", README, flags=re.S)
HEADINGS = [README[: README.index(block)].rsplit("\n#", 1)[1].split("\n", 1)[0] for block in BLOCKS]


def echo_tool_result(body: dict[str, Any]) -> dict[str, Any]:
    """The model's answer repeats the last tool result: it must have been fed back."""
    tool = [m for m in body["messages"] if m.get("role") == "tool"]
    return say(str(tool[-1]["content"]) if tool else "no tool result came back")


def echo_function_response(body: dict[str, Any]) -> dict[str, Any]:
    """The same for ADK, whose tool message is its function response ``{"result": ...}``."""
    tool = [m for m in body["messages"] if m.get("role") == "tool"]
    return say(json.loads(tool[-1]["content"])["result"] if tool else "no tool result came back")


WEATHER = call("weather_forecast", {"city": "Oslo"})
SCRIPT = [
    call("load_tools", {"tools": ["weather"]}),  # One turn: a meta-tool (the menu's bundle),
    call("call_tool", {"name": "weather_forecast", "arguments": {"city": "Oslo"}}),  # revealed
    echo_tool_result,  # then the answer
    WEATHER,  # Agent
    echo_tool_result,
    WEATHER,  # OpenAI Agents SDK
    echo_tool_result,
    WEATHER,  # pydantic-ai
    echo_tool_result,
    WEATHER,  # LangChain
    echo_tool_result,
    WEATHER,  # Google ADK
    echo_function_response,
]


@pytest.fixture
def readme_env(
    server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> ScriptedServer:
    monkeypatch.chdir(tmp_path)  # the examples' agent.db lands here
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.setenv("TOOLTRAY_ACTIVATION_SHARE", "0")
    monkeypatch.setenv("TOOLTRAY_OPENING", "share")
    bin_dir = str(Path(sys.executable).parent)  # the installed console scripts
    monkeypatch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
    server.extend(SCRIPT)
    return server


def test_the_readme_has_the_blocks_this_test_scripts() -> None:
    assert HEADINGS == [
        "## One turn",
        "## One turn",
        "## MCP servers",
        "## With an agent framework",
        "## With an agent framework",
        "## With an agent framework",
        "## With an agent framework",
    ]


def test_every_python_block_runs_as_written(readme_env: ScriptedServer, capsys: Any) -> None:
    pytest.importorskip("agents")
    pytest.importorskip("pydantic_ai")
    pytest.importorskip("mcp")
    pytest.importorskip("langchain_openai")
    pytest.importorskip("google.adk")
    names: dict[str, Any] = {"__name__": "readme"}
    outputs = []
    try:
        for number, block in enumerate(BLOCKS):
            exec(compile(block, f"README.md python block {number}", "exec"), names)
            outputs.append(capsys.readouterr().out.strip())
    finally:
        if "trinket" in names:
            names["trinket"].close()
    answer = "Sunny in Oslo for 1 day(s)."
    assert outputs[0] == answer  # the tool ran and its result went back to the model
    assert outputs[1].startswith(f"{answer} [('weather_forecast', 'ok')]")
    assert '"timezone": "UTC"' in outputs[2] and '"datetime": "20' in outputs[2]
    assert outputs[3:] == [answer] * 4  # each framework's agent ran the tool
    first = readme_env.requests[0]
    assert "- weather: " in first["messages"][0]["content"]  # the bundle menu
    assert "load_tools" in readme_env.tool_names(0)  # the model saw what it called
    assert readme_env.tool_names(1) == readme_env.tool_names(0)  # tools= kept: the cache holds
    fed = [m for m in readme_env.requests[1]["messages"] if m.get("role") == "tool"]
    assert fed and fed[0]["content"].startswith("Loaded 1 tool, listed below")
    assert "weather_forecast(city: str" in fed[0]["content"]  # revealed in the answer
    assert first["model"] == "my-model" and len(readme_env.requests) == len(SCRIPT)
