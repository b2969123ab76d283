"""The LangChain agent middleware end to end: ``create_agent`` with ``ChatOpenAI`` over real HTTP
to the scripted server, a real trinket, SQLite store, embedder and catalog."""

from __future__ import annotations

import asyncio
from typing import Any

import catalog
import pytest
from scripted_server import ScriptedServer, bridged_after_reveal, call, say

pytest.importorskip("langchain")
pytest.importorskip("langchain_openai")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402

from tooltray.memory.adapters import TrayMiddleware  # noqa: E402

META = ["load_tools", "unload_tools", "fallback", "read_result"]
MATH = "Please multiply 17 by 23 for me."


def agent(tray: TrayMiddleware, server: ScriptedServer, tools: Any = ()) -> Any:
    model = ChatOpenAI(model="scripted", base_url=server.base_url, api_key="x", max_retries=0)
    return create_agent(model, tools=list(tools), middleware=[tray], system_prompt="Be brief.")


def run(tray: TrayMiddleware, server: ScriptedServer, messages: Any, tools: Any = ()) -> Any:
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    return agent(tray, server, tools).invoke({"messages": messages})


def answer(result: Any) -> str:
    return str(result["messages"][-1].content)


def test_langchain_model_call_offers_the_trinket_set_and_runs_the_tool(
    make_trinket: Any, server: ScriptedServer, rows: Any, completed: list[tuple[str, int]]
) -> None:
    tray = TrayMiddleware(make_trinket(), "s1")
    tray.start()
    server.extend([call("weather_forecast", {"city": "Oslo"}), say("Sunny in Oslo.")])
    result = run(tray, server, "What is the weather forecast for Oslo?")
    assert answer(result) == "Sunny in Oslo."
    assert server.tool_names(0)[:4] == META
    assert "weather_forecast" in server.tool_names(0)
    assert len(server.tool_names(0)) == 6  # meta-tools + max_tools=2, not all 10 allowed
    assert "multiply" not in server.tool_names(0)
    assert "delete_all_files" not in server.tool_names(0)
    system = server.requests[0]["messages"][0]
    assert system["role"] == "system" and "Tool bundles for load_tools" in system["content"]
    assert "Be brief." in system["content"]  # the caller's own system prompt is kept
    assert ("weather_forecast", {"city": "Oslo", "days": 1}) in catalog.CALLS
    tool_msgs = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert '"forecast": "sunny"' in tool_msgs[-1]["content"]  # the real result went back
    assert [r[2] for r in rows("s1", "used")] == ["weather_forecast"]
    assert tray.turn == 1 and completed == [("s1", 1)]


def test_langchain_load_tools_is_offered_on_the_next_model_call(
    make_trinket: Any, server: ScriptedServer, rows: Any
) -> None:
    tray = TrayMiddleware(make_trinket(), "s1")
    server.extend(
        [
            call("load_tools", {"tools": ["day_of_week"]}),
            call("day_of_week", {"date": "2024-03-01"}),
            say("It was a Friday."),
        ]
    )
    result = run(tray, server, MATH)
    assert "day_of_week" not in server.tool_names(0)
    assert "day_of_week" in server.tool_names(1)
    assert server.tool_names(1)[: len(server.tool_names(0))] == server.tool_names(0)  # appends
    loaded = [m for m in server.requests[1]["messages"] if m["role"] == "tool"][-1]
    assert loaded["content"].startswith("Loaded: day_of_week")  # the trinket answered
    assert [m for m in server.requests[2]["messages"] if m["role"] == "tool"][-1]["content"] == (
        "Friday"
    )
    assert answer(result) == "It was a Friday."
    assert [r[2] for r in rows("s1", "used")] == ["day_of_week"]


def test_langchain_unloaded_allowed_tool_runs_and_denied_never_does(
    make_trinket: Any, server: ScriptedServer, rows: Any
) -> None:
    tray = TrayMiddleware(make_trinket(), "s1")
    server.extend(
        [
            call("days_between", {"start": "2024-01-01", "end": "2024-03-01"}),
            call("delete_all_files", {"confirm": True}),
            call("call_tool", {"name": "delete_all_files", "arguments": {"confirm": True}}),
            say("60 days; I cannot delete files."),
        ]
    )
    run(tray, server, MATH)
    assert "days_between" not in server.tool_names(0)
    assert ("days_between", {"start": "2024-01-01", "end": "2024-03-01"}) in catalog.CALLS
    assert "days_between" in server.tool_names(1)  # loaded as an escape after it ran
    assert all("delete_all_files" not in server.tool_names(i) for i in range(4))
    assert not [c for c in catalog.CALLS if c[0] == "delete_all_files"]
    bridged = [m for m in server.requests[3]["messages"] if m["role"] == "tool"][-1]
    assert "cannot run here" in bridged["content"]
    assert ("days_between", "unlisted_call") in [(r[2], r[3]) for r in rows("s1", "escape")]
    assert [r[2] for r in rows("s1", "used")] == ["days_between"]


def test_langchain_append_reveal_keeps_tools_and_runs_call_tool(
    make_trinket: Any, server: ScriptedServer, rows: Any, completed: list[tuple[str, int]]
) -> None:
    """``reveal = "append"``: every call offers the same tools=, a revealed tool is listed to the
    model (load answer; a growth note before its turn's user message) and runs through call_tool
    or by name; the async path (``ainvoke``) behaves the same, the caller's own tool included."""

    @tool
    def shout(text: str) -> str:
        """Repeat text loudly."""
        return text.upper() + "!"

    tray = TrayMiddleware(make_trinket(reveal="append", growth="every_turn"), "s1")
    server.extend(
        [
            call("load_tools", {"tools": ["day_of_week"]}),
            bridged_after_reveal,
            call("day_of_week", {"date": "2024-03-02"}),
            say("Friday, then Saturday."),
            call("call_tool", {"name": "weather_forecast", "arguments": {"city": "Oslo"}}),
            call("shout", {"text": "sunny"}),
            say("Sunny."),
        ]
    )
    first = asyncio.run(agent(tray, server, [shout]).ainvoke({"messages": [("user", MATH)]}))
    follow_up = {"role": "user", "content": "What is the weather forecast for Oslo?"}
    second = run(tray, server, [*first["messages"], follow_up], [shout])
    offered = [server.tool_names(i) for i in range(len(server.requests))]
    assert "call_tool" in offered[0] and "day_of_week" not in offered[0]
    assert offered[0][-1] == "shout"  # the caller's own tool, after tooltray's
    assert all(names == offered[0] for names in offered)
    assert len({str(r["messages"][0]) for r in server.requests}) == 1  # the system text too
    turn_two = [m for m in server.requests[4]["messages"] if m["role"] == "user"][-1]
    assert str(turn_two["content"]).startswith("Tools now available:")
    assert "weather_forecast(" in str(turn_two["content"])
    humans = [m.content for m in second["messages"] if m.type == "human"]
    assert humans == [MATH, follow_up["content"]]  # the agent's state keeps the user's text
    assert ("day_of_week", {"date": "2024-03-01"}) in catalog.CALLS
    assert ("weather_forecast", {"city": "Oslo", "days": 1}) in catalog.CALLS
    assert [m for m in server.requests[6]["messages"] if m["role"] == "tool"][-1]["content"] == (
        "SUNNY!"
    )
    assert answer(second) == "Sunny."
    used = [r[2] for r in rows("s1", "used")]
    assert used == ["day_of_week", "day_of_week", "weather_forecast"]
    assert completed == [("s1", 1), ("s1", 2)]


def test_langchain_sync_tool_runs_from_a_thread_that_runs_a_loop(
    make_trinket: Any, rows: Any
) -> None:
    """A middleware tool invoked synchronously where an event loop already runs (sync agent
    code called from async code) still runs the registry tool and reports its use."""
    tray = TrayMiddleware(make_trinket(), "s1")
    tray.start()
    day = next(t for t in tray.tools if t.name == "day_of_week")

    async def inside_a_loop() -> Any:
        return day.invoke({"date": "2024-03-01"})

    assert asyncio.run(inside_a_loop()) == "Friday"
    assert ("day_of_week", {"date": "2024-03-01"}) in catalog.CALLS
    tray.trinket.flush("s1")  # tool-used rows are stored at the turn's end, or now
    assert [r[2] for r in rows("s1", "used")] == ["day_of_week"]
