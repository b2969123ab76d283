"""A process restart mid-conversation resumes the same loaded set and prompt prefix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import CATALOG, TEST_SETTINGS
from scripted_server import ScriptedServer, call, say


def run_first_half(server: ScriptedServer, db_url: str, tmp_path: Path) -> list[dict[str, Any]]:
    script = tmp_path / "first.json"
    script.write_text(json.dumps(["Please multiply 17 by 23 for me.", "And 6 times 7?"]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLTRAY_")}
    env.update({f"TOOLTRAY_{k.upper()}": str(v) for k, v in TEST_SETTINGS.items()})
    tooltray = str(Path(sys.executable).parent / "tooltray")
    argv = [tooltray, "chat", "--base-url", server.base_url]
    argv += ["--model", "m", "--db", db_url, "--catalog", str(CATALOG), "--session", "r1"]
    argv += ["--script", str(script), "--format", "json"]
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_restart_resumes_the_same_loaded_set(
    make_agent: Any, server: ScriptedServer, db_url: str, tmp_path: Path
) -> None:
    server.extend(
        [
            call("multiply", {"a": 17, "b": 23}),
            say("391"),
            call("load_tools", {"tools": ["calendar"]}),
            call("multiply", {"a": 6, "b": 7}),
            say("42"),
        ]
    )
    turns = run_first_half(server, db_url, tmp_path)
    assert [t["answer"] for t in turns] == ["391", "42"]
    assert {"day_of_week", "days_between"} <= set(turns[1]["loaded"])
    agent = make_agent()
    history = [m for t in turns for m in t["messages"]]
    view = agent.start("r1", history)
    assert list(view.loaded) == turns[1]["loaded"]
    assert view.prefix_hash == turns[1]["prefix_hash"]
    server.extend([call("days_between", {"start": "2024-01-01", "end": "2024-03-01"}), say("60")])
    result = agent.run_turn("r1", history, "How many days from New Year to March 2024?")
    assert server.tool_names(5) == turns[1]["loaded"]
    assert result.calls[0].result == "60" and result.turn == 3
