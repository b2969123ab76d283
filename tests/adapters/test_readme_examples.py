"""The README's adapter examples run as printed, against the scripted server on loopback."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import catalog
import pytest
from scripted_server import ScriptedServer, call, say

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
SECTION = README.split("### With an agent framework", 1)[1].split("\n## ", 1)[0]
BLOCKS = re.findall(r"```python\n(.+?)\n```", SECTION, flags=re.S)


def run_example(
    index: int, make_trinket: Any, server: ScriptedServer, capsys: Any
) -> tuple[str, str]:
    code = BLOCKS[index]
    server.extend([call("weather_forecast", {"city": "Oslo"}), say("Sunny in Oslo.")])
    names = {"trinket": make_trinket(), "base_url": server.base_url}
    names |= {"weather_forecast": catalog.weather_forecast, "day_of_week": catalog.day_of_week}
    exec(compile(code, "README.md", "exec"), names)
    return code, capsys.readouterr().out


def test_openai_agents_readme_example_runs(
    make_trinket: Any, server: ScriptedServer, capsys: Any
) -> None:
    pytest.importorskip("agents")
    code, out = run_example(0, make_trinket, server, capsys)
    assert len(code.splitlines()) <= 20
    assert out.strip() == "Sunny in Oslo."
    assert ("weather_forecast", {"city": "Oslo", "days": 1}) in catalog.CALLS
    assert "weather_forecast" in server.tool_names(0) and len(server.tool_names(0)) == 6


def test_pydantic_ai_readme_example_runs(
    make_trinket: Any, server: ScriptedServer, capsys: Any
) -> None:
    pytest.importorskip("pydantic_ai")
    code, out = run_example(1, make_trinket, server, capsys)
    assert len(code.splitlines()) <= 20
    assert out.strip() == "Sunny in Oslo."
    assert ("weather_forecast", {"city": "Oslo", "days": 1}) in catalog.CALLS
    assert "weather_forecast" in server.tool_names(0) and "add" not in server.tool_names(0)
