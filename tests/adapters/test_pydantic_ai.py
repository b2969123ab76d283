"""The pydantic-ai wrapper toolset end to end: pydantic-ai's Agent and OpenAIChatModel over real
HTTP to the scripted server, a real trinket, store, embedder and catalog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import catalog
import pytest
from scripted_server import ScriptedServer, bridged_after_reveal, call, say

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402
from pydantic_ai.toolsets import FunctionToolset  # noqa: E402

from tooltray.memory.adapters import TrayToolset  # noqa: E402

META = ["load_tools", "unload_tools", "fallback", "read_result"]
MATH = "Please multiply 17 by 23 for me."
FUNCTIONS = [fn for fns in catalog.TOOLS.values() for fn in fns]


def agent(server: ScriptedServer, tray: TrayToolset) -> Agent[None, str]:
    provider = OpenAIProvider(base_url=server.base_url, api_key="x")
    return Agent(OpenAIChatModel("scripted", provider=provider), toolsets=[tray])


def tray(trinket: Any, session_id: str = "s1") -> TrayToolset:
    return TrayToolset(FunctionToolset(FUNCTIONS), trinket=trinket, session_id=session_id)


def test_pydantic_ai_selection_at_start_offers_the_trinket_set(
    make_trinket: Any, server: ScriptedServer, rows: Any, completed: list[tuple[str, int]]
) -> None:
    toolset = tray(make_trinket())
    toolset.start()
    server.extend([call("weather_forecast", {"city": "Oslo"}), say("Sunny in Oslo.")])
    result = agent(server, toolset).run_sync("What is the weather forecast for Oslo?")
    assert result.output == "Sunny in Oslo."
    assert server.tool_names(0)[:4] == META
    assert "weather_forecast" in server.tool_names(0)
    assert len(server.tool_names(0)) == 6  # meta-tools + max_tools=2, not all 10 allowed
    assert "multiply" not in server.tool_names(0)
    assert "delete_all_files" not in server.tool_names(0)  # denied: never listed
    system = server.requests[0]["messages"][0]
    assert system["role"] == "system" and "Tool bundles for load_tools" in system["content"]
    assert ("weather_forecast", {"city": "Oslo", "days": 1}) in catalog.CALLS
    assert [r[2] for r in rows("s1", "used")] == ["weather_forecast"]
    assert completed == [("s1", 1)]


def test_pydantic_ai_recovery_through_load_tools_is_offered_next_step(
    make_trinket: Any, server: ScriptedServer, rows: Any
) -> None:
    toolset = tray(make_trinket())
    server.extend(
        [
            call("load_tools", {"tools": ["day_of_week"]}),
            call("day_of_week", {"date": "2024-03-01"}),
            say("It was a Friday."),
        ]
    )
    result = agent(server, toolset).run_sync("Please multiply 17 by 23 for me.")
    assert "day_of_week" not in server.tool_names(0)
    assert "day_of_week" in server.tool_names(1)
    assert server.tool_names(1)[: len(server.tool_names(0))] == server.tool_names(0)  # appends
    tool_msgs = [m for m in server.requests[2]["messages"] if m["role"] == "tool"]
    assert tool_msgs[-1]["content"] == "Friday"
    assert result.output == "It was a Friday."
    assert [r[2] for r in rows("s1", "used")] == ["day_of_week"]


def test_pydantic_ai_unloaded_call_is_loaded_and_runs_on_retry_denied_never(
    make_trinket: Any, server: ScriptedServer
) -> None:
    toolset = tray(make_trinket())
    server.extend(
        [
            call("days_between", {"start": "2024-01-01", "end": "2024-03-01"}),
            call("days_between", {"start": "2024-01-01", "end": "2024-03-01"}),
            call("delete_all_files", {"confirm": True}),
            say("60 days; I cannot delete files."),
        ]
    )
    agent(server, toolset).run_sync("Please multiply 17 by 23 for me.")
    assert "days_between" not in server.tool_names(0)
    assert "days_between" in server.tool_names(1)  # loaded as an escape after the missed call
    assert catalog.CALLS == [("days_between", {"start": "2024-01-01", "end": "2024-03-01"})]
    assert all("delete_all_files" not in server.tool_names(i) for i in range(4))


def test_pydantic_ai_wrapped_tools_unknown_to_the_registry_join_it(
    make_trinket: Any, server: ScriptedServer
) -> None:
    from tooltray.tools.registry import ToolRegistry

    trinket = make_trinket(ToolRegistry())  # like an MCP server's tools: only the toolset has them
    toolset = TrayToolset(
        FunctionToolset(FUNCTIONS[:4]), trinket=trinket, session_id="s1", bundle="numbers_text"
    )
    server.extend([call("load_tools", {"query": "count the words"}), say("ok")])
    agent(server, toolset).run_sync("Hello there.")
    assert {s.name for s in trinket.registry.allowed()} == {s.__name__ for s in FUNCTIONS[:4]}
    assert "word_count" in server.tool_names(1)


def test_pydantic_ai_restart_resumes_the_loaded_set(
    make_trinket: Any, server: ScriptedServer
) -> None:
    first = tray(make_trinket(), "r1")
    first.start()
    server.extend([call("load_tools", {"tools": ["calendar"]}), say("Loaded.")])
    done = agent(server, first).run_sync("Please multiply 17 by 23 for me.")
    loaded = server.tool_names(1)
    assert {"day_of_week", "days_between"} <= set(loaded)
    first.trinket.close()

    second = tray(make_trinket(), "r1")  # a new process: state comes from the store
    server.extend([call("days_between", {"start": "2024-01-01", "end": "2024-03-01"}), say("60")])
    result = agent(server, second).run_sync(
        "How many days from New Year to March 2024?", message_history=done.all_messages()
    )
    assert server.tool_names(2) == loaded
    assert result.output == "60" and second.progress.turn == 2


def test_pydantic_ai_over_an_mcp_server_selects_and_recovers(
    make_trinket: Any, server: ScriptedServer, rows: Any
) -> None:
    pytest.importorskip("fastmcp")
    import sys

    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    from tooltray.tools.registry import ToolRegistry

    script = str(Path(catalog.__file__).with_name("mcp_server.py"))
    transport = StdioTransport(command=sys.executable, args=[script])
    mcp = MCPToolset(transport, id="mathtext", init_timeout=60, read_timeout=60)
    trinket = make_trinket(ToolRegistry(), max_tools=1)  # the server's tools join it as listed
    toolset = TrayToolset(mcp, trinket=trinket, session_id="m1")
    server.extend(
        [
            call("load_tools", {"tools": ["long_report"]}),
            call("long_report", {"lines": 300}),
            say("All nominal."),
        ]
    )
    result = agent(server, toolset).run_sync("Please reverse the text 'tooltray'.")
    assert {s.name for s in trinket.registry.allowed()} == {
        "add_numbers",
        "reverse_text",
        "long_report",
    }
    assert server.tool_names(0)[:4] == META and "reverse_text" in server.tool_names(0)
    assert "long_report" not in server.tool_names(0) and "long_report" in server.tool_names(1)
    report = [m for m in server.requests[2]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "read_result" in report and len(report) < 300 * 40  # shortened behind a handle
    assert result.output == "All nominal."
    assert [r[2] for r in rows("m1", "used")] == ["long_report"]


def test_pydantic_ai_append_reveal_keeps_tools_and_runs_call_tool(
    make_trinket: Any, server: ScriptedServer, rows: Any
) -> None:
    """``reveal = "append"``: every step offers the same tools=, a revealed tool is listed to
    the model (load answer; with the reveals capability, a growth note before its turn's user
    prompt) and runs through call_tool, bad arguments answered with its signature."""
    toolset = tray(make_trinket(reveal="append", growth="every_turn"))
    server.extend(
        [
            call("load_tools", {"tools": ["day_of_week"]}),
            bridged_after_reveal,
            call("call_tool", {"name": "day_of_week", "arguments": {"day": 2}}),
            say("It was a Friday."),
            call("call_tool", {"name": "weather_forecast", "arguments": {"city": "Oslo"}}),
            say("Sunny."),
        ]
    )
    provider = OpenAIProvider(base_url=server.base_url, api_key="x")
    model = OpenAIChatModel("scripted", provider=provider)
    bot = Agent(model, toolsets=[toolset], capabilities=[toolset.reveals()])
    first = bot.run_sync(MATH)
    second = bot.run_sync(
        "What is the weather forecast for Oslo?", message_history=first.all_messages()
    )
    offered = [server.tool_names(i) for i in range(len(server.requests))]
    assert "call_tool" in offered[0] and "day_of_week" not in offered[0]
    assert all(names == offered[0] for names in offered)
    assert len({str(r["messages"][0]) for r in server.requests}) == 1  # the system text too
    bad = [m for m in server.requests[3]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "bad arguments for day_of_week" in bad and "day_of_week(date: str)" in bad
    turn_two = [m for m in server.requests[4]["messages"] if m["role"] == "user"][-1]
    assert str(turn_two["content"]).startswith("Tools now available:")
    assert "weather_forecast(" in str(turn_two["content"])
    assert catalog.CALLS == [
        ("day_of_week", {"date": "2024-03-01"}),
        ("weather_forecast", {"city": "Oslo", "days": 1}),
    ]
    assert second.output == "Sunny."
    assert [r[2] for r in rows("s1", "used")] == ["day_of_week", "weather_forecast"]
    kept = [getattr(p, "content", "") for m in second.all_messages() for p in m.parts]
    assert not [c for c in kept if str(c).startswith("Tools now")]  # history keeps user text
