"""The OpenAI Agents SDK adapter end to end: the SDK's Runner and OpenAIChatCompletionsModel
over real HTTP to the scripted server, a real trinket, store, embedder and catalog."""

from __future__ import annotations

import asyncio
from typing import Any

import catalog
import pytest
from scripted_server import ScriptedServer, bridged_after_reveal, call, say

pytest.importorskip("agents")

from agents import OpenAIChatCompletionsModel, RunConfig, Runner  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

from tooltray.memory.adapters import AgentsTray  # noqa: E402

META = ["load_tools", "unload_tools", "fallback", "read_result"]
MATH = "Please multiply 17 by 23 for me."
CONFIG = RunConfig(tracing_disabled=True, tool_not_found_behavior="return_error_to_model")


def model(server: ScriptedServer) -> OpenAIChatCompletionsModel:
    client = AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    return OpenAIChatCompletionsModel(model="scripted", openai_client=client)


def run(tray: AgentsTray, server: ScriptedServer, prompt: Any) -> Any:
    agent = tray.agent(model(server))
    return asyncio.run(Runner.run(agent, prompt, hooks=tray.hooks, run_config=CONFIG))


def test_openai_agents_selection_at_start_offers_the_trinket_set(
    make_trinket: Any, server: ScriptedServer, rows: Any, completed: list[tuple[str, int]]
) -> None:
    tray = AgentsTray(make_trinket(), "s1")
    tray.start()
    server.extend([call("weather_forecast", {"city": "Oslo"}), say("Sunny in Oslo.")])
    result = run(tray, server, "What is the weather forecast for Oslo?")
    assert result.final_output == "Sunny in Oslo."
    assert server.tool_names(0)[:4] == META
    assert "weather_forecast" in server.tool_names(0)
    assert len(server.tool_names(0)) == 6  # meta-tools + max_tools=2, not all 10 allowed
    assert "multiply" not in server.tool_names(0)
    assert "delete_all_files" not in server.tool_names(0)
    system = server.requests[0]["messages"][0]
    assert system["role"] == "system" and "Tool bundles for load_tools" in system["content"]
    assert ("weather_forecast", {"city": "Oslo", "days": 1}) in catalog.CALLS
    assert [r[2] for r in rows("s1", "used")] == ["weather_forecast"]
    assert tray.turn == 1 and completed == [("s1", 1)]


def recovery_steps() -> list[Any]:
    """The model loads a tool it was not offered, calls it, then answers."""
    return [
        call("load_tools", {"tools": ["day_of_week"]}),
        call("day_of_week", {"date": "2024-03-01"}),
        say("It was a Friday."),
    ]


def test_openai_agents_recovery_through_load_tools_is_offered_next_request(
    make_trinket: Any, server: ScriptedServer, rows: Any
) -> None:
    tray = AgentsTray(make_trinket(), "s1")
    server.extend(recovery_steps())
    result = run(tray, server, "Please multiply 17 by 23 for me.")
    assert "day_of_week" not in server.tool_names(0)
    assert "day_of_week" in server.tool_names(1)
    assert server.tool_names(1)[: len(server.tool_names(0))] == server.tool_names(0)  # appends
    tool_msgs = [m for m in server.requests[2]["messages"] if m["role"] == "tool"]
    assert tool_msgs[-1]["content"] == "Friday"
    assert result.final_output == "It was a Friday."
    assert [r[2] for r in rows("s1", "used")] == ["day_of_week"]


def test_openai_agents_unloaded_allowed_tool_still_runs_and_denied_never_does(
    make_trinket: Any, server: ScriptedServer, rows: Any
) -> None:
    tray = AgentsTray(make_trinket(), "s1")
    server.extend(
        [
            call("days_between", {"start": "2024-01-01", "end": "2024-03-01"}),
            call("delete_all_files", {"confirm": True}),
            say("60 days; I cannot delete files."),
        ]
    )
    run(tray, server, "Please multiply 17 by 23 for me.")
    assert "days_between" not in server.tool_names(0)
    assert ("days_between", {"start": "2024-01-01", "end": "2024-03-01"}) in catalog.CALLS
    assert "days_between" in server.tool_names(1)  # loaded as an escape after it ran
    assert all("delete_all_files" not in server.tool_names(i) for i in range(3))
    assert not [c for c in catalog.CALLS if c[0] == "delete_all_files"]
    assert ("days_between", "unlisted_call") in [(r[2], r[3]) for r in rows("s1", "escape")]


def test_openai_agents_restart_resumes_the_loaded_set(
    make_trinket: Any, server: ScriptedServer
) -> None:
    first = AgentsTray(make_trinket(), "r1")
    first.start()
    server.extend([call("load_tools", {"tools": ["calendar"]}), say("Loaded.")])
    done = run(first, server, "Please multiply 17 by 23 for me.")
    loaded = server.tool_names(1)
    assert {"day_of_week", "days_between"} <= set(loaded)
    first.trinket.close()

    second = AgentsTray(make_trinket(), "r1")  # a new process: state comes from the store
    server.extend([call("days_between", {"start": "2024-01-01", "end": "2024-03-01"}), say("60")])
    follow_up = {"role": "user", "content": "How many days from New Year to March 2024?"}
    result = run(second, server, [*done.to_input_list(), follow_up])
    assert server.tool_names(2) == loaded
    assert result.final_output == "60" and second.turn == 2


def test_openai_agents_streamed_run_follows_the_trinket_too(
    make_trinket: Any, server: ScriptedServer, rows: Any
) -> None:
    tray = AgentsTray(make_trinket(), "s1")
    server.extend(recovery_steps())

    async def stream() -> Any:
        agent = tray.agent(model(server))
        result = Runner.run_streamed(agent, MATH, hooks=tray.hooks, run_config=CONFIG)
        async for _ in result.stream_events():
            pass
        return result

    result = asyncio.run(stream())
    assert all(r.get("stream") for r in server.requests)
    assert "day_of_week" not in server.tool_names(0) and "day_of_week" in server.tool_names(1)
    assert result.final_output == "It was a Friday."
    assert [r[2] for r in rows("s1", "used")] == ["day_of_week"]


def test_openai_agents_append_reveal_keeps_tools_and_runs_call_tool(
    make_trinket: Any, server: ScriptedServer, rows: Any
) -> None:
    """``reveal = "append"``: every request offers the same tools=, a revealed tool is listed
    to the model (load answer; a growth note before its turn's user item) and runs through
    call_tool or by name, and its use is recorded under its own name."""
    tray = AgentsTray(make_trinket(reveal="append", growth="every_turn"), "s1")
    server.extend(
        [
            call("load_tools", {"tools": ["day_of_week"]}),
            bridged_after_reveal,
            call("day_of_week", {"date": "2024-03-02"}),
            say("Friday, then Saturday."),
            call("call_tool", {"name": "weather_forecast", "arguments": {"city": "Oslo"}}),
            say("Sunny."),
        ]
    )
    first = run(tray, server, MATH)
    follow_up = {"role": "user", "content": "What is the weather forecast for Oslo?"}
    second = run(tray, server, [*first.to_input_list(), follow_up])
    offered = [server.tool_names(i) for i in range(len(server.requests))]
    assert "call_tool" in offered[0] and "day_of_week" not in offered[0]
    assert all(names == offered[0] for names in offered)
    assert len({str(r["messages"][0]) for r in server.requests}) == 1  # the system text too
    turn_two = [m for m in server.requests[4]["messages"] if m["role"] == "user"][-1]
    assert str(turn_two["content"]).startswith("Tools now available:")
    assert "weather_forecast(" in str(turn_two["content"])
    assert ("day_of_week", {"date": "2024-03-01"}) in catalog.CALLS
    assert ("day_of_week", {"date": "2024-03-02"}) in catalog.CALLS
    assert ("weather_forecast", {"city": "Oslo", "days": 1}) in catalog.CALLS
    assert second.final_output == "Sunny."
    used = [r[2] for r in rows("s1", "used")]
    assert used == ["day_of_week", "day_of_week", "weather_forecast"]
