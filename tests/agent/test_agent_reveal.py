"""The bundled loop on the reveal defaults (``reveal = "append"``): ``tools=`` never changes
between boundaries, revealed tools reach the model in its messages, and calls to them run
(through ``call_tool`` or by name). Real trinket, store, embedder, registry and HTTP server."""

from __future__ import annotations

from typing import Any

import catalog
from conftest import history
from scripted_server import ScriptedServer, bridged_after_reveal, call, say

MATH = "Please multiply 17 by 23 for me."
WEATHER = "What is the weather forecast for Oslo?"


def test_the_loop_keeps_tools_fixed_and_runs_revealed_tools(
    make_agent: Any, server: ScriptedServer, db_url: str
) -> None:
    agent = make_agent(reveal="append", growth="every_turn")
    server.extend(
        [
            call("load_tools", {"tools": ["day_of_week"]}),
            bridged_after_reveal,
            call("day_of_week", {"date": "2024-03-02"}),  # by name: it runs too
            say("Friday, then Saturday."),
            call("call_tool", {"name": "weather_forecast", "arguments": {"city": "Oslo"}}),
            say("Sunny."),
        ]
    )
    first = agent.run_turn("s1", [], MATH)
    second = agent.run_turn("s1", first.messages, WEATHER)
    offered = [server.tool_names(i) for i in range(len(server.requests))]
    assert "call_tool" in offered[0] and "day_of_week" not in offered[0]
    assert all(names == offered[0] for names in offered)  # byte-stable tools= all session
    systems = {str(r["messages"][0]) for r in server.requests}
    assert len(systems) == 1  # and the system text
    assert [(c.tool, c.status) for c in first.calls] == [
        ("load_tools", "meta"),
        ("day_of_week", "ok"),
        ("day_of_week", "ok"),
    ]
    assert ("day_of_week", {"date": "2024-03-01"}) in catalog.CALLS
    assert ("day_of_week", {"date": "2024-03-02"}) in catalog.CALLS
    turn_two = server.requests[4]["messages"][-1]  # growth revealed weather_forecast before it
    assert turn_two["role"] == "user" and turn_two["content"].startswith("Tools now available:")
    assert "weather_forecast(" in turn_two["content"] and turn_two["content"].endswith(WEATHER)
    assert [(c.tool, c.status) for c in second.calls] == [("weather_forecast", "ok")]
    assert ("weather_forecast", {"city": "Oslo", "days": 1}) in catalog.CALLS
    assert [r[2] for r in history(db_url, "s1", "used")] == ["day_of_week"] * 2 + [
        "weather_forecast"
    ]
