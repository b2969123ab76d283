"""The Google ADK toolset end to end: a real ADK ``Runner`` and ``LlmAgent`` whose model is ADK's
own ``OpenAILlm`` over real HTTP to the scripted server, a real trinket, SQLite store, embedder
and catalog."""

from __future__ import annotations

import asyncio
from typing import Any

import catalog
import pytest
import sqlalchemy as sa
from scripted_server import ScriptedServer, bridged_after_reveal, call, say

pytest.importorskip("google.adk", reason="Google ADK is the optional extra tooltray[adk]")

from google.adk.integrations.openai import OpenAILlm  # noqa: E402
from google.adk.runners import Runner  # noqa: E402
from google.adk.sessions import InMemorySessionService  # noqa: E402
from google.genai import types  # noqa: E402

from tooltray.memory.adapters import AdkTray  # noqa: E402

META = ["load_tools", "unload_tools", "fallback", "read_result"]
MATH = "Please multiply 17 by 23 for me."


def shout(text: str) -> str:
    """Repeat text loudly."""
    return text.upper() + "!"


def runner(tray: AdkTray, server: ScriptedServer, tools: Any = ()) -> Runner:
    model = OpenAILlm(model="scripted", base_url=server.base_url, api_key="x")
    agent = tray.agent(model, instruction="Be brief.", tools=list(tools))
    return Runner(
        agent=agent,
        app_name="tests",
        session_service=InMemorySessionService(),
        auto_create_session=True,
    )


def run(adk: Runner, text: str, session: str = "adk-1") -> str:
    """One user turn through the runner; the agent's final text."""
    message = types.Content(role="user", parts=[types.Part(text=text)])
    final = ""
    for event in adk.run(user_id="u", session_id=session, new_message=message):
        if event.is_final_response() and event.content and event.content.parts:
            final = "".join(part.text or "" for part in event.content.parts)
    return final


def stored_loaded(db_url: str, session_id: str) -> list[str]:
    """The session's loaded set as the database holds it."""
    engine = sa.create_engine(db_url)
    sql = "SELECT name FROM loaded_tools WHERE session_id = :s ORDER BY position"
    with engine.connect() as conn:
        names = [str(r[0]) for r in conn.execute(sa.text(sql), {"s": session_id})]
    engine.dispose()
    return names


def tool_results(server: ScriptedServer, i: int) -> list[str]:
    return [str(m["content"]) for m in server.requests[i]["messages"] if m["role"] == "tool"]


def test_adk_step_offers_the_trinket_set_then_a_loaded_tool(
    make_trinket: Any,
    server: ScriptedServer,
    rows: Any,
    db_url: str,
    completed: list[tuple[str, int]],
) -> None:
    """``reveal = "prefix"``: the model sees tooltray's rendered set, calls load_tools, and the
    loaded tool is offered on the next model call of the same run, where it runs."""
    tray = AdkTray(make_trinket(reveal="prefix"), "s1")
    tray.start()
    server.extend(
        [
            call("load_tools", {"tools": ["day_of_week"]}),
            call("day_of_week", {"date": "2024-03-01"}),
            say("It was a Friday."),
        ]
    )
    assert "day_of_week" not in stored_loaded(db_url, "s1")
    assert run(runner(tray, server), MATH) == "It was a Friday."
    first, second = server.tool_names(0), server.tool_names(1)
    assert first[:4] == META and "day_of_week" not in first
    assert len(first) == 6 and "delete_all_files" not in first  # meta + max_tools=2, not all
    assert "day_of_week" in second and second[: len(first)] == first
    system = server.requests[0]["messages"][0]
    assert system["role"] == "system" and "Tool bundles for load_tools" in system["content"]
    assert "Be brief." in system["content"]  # the agent's own instruction is kept
    assert "Loaded: day_of_week" in tool_results(server, 1)[-1]  # the trinket answered
    assert "Friday" in tool_results(server, 2)[-1]
    assert ("day_of_week", {"date": "2024-03-01"}) in catalog.CALLS
    assert "day_of_week" in stored_loaded(db_url, "s1")  # the store's loaded set changed
    assert "day_of_week" in [r[2] for r in rows("s1", "loaded")]
    assert [r[2] for r in rows("s1", "used")] == ["day_of_week"]
    assert completed == [("s1", 1)]


def test_adk_unloaded_allowed_tool_runs_and_denied_never_does(
    make_trinket: Any, server: ScriptedServer, rows: Any
) -> None:
    tray = AdkTray(make_trinket(), "s1")
    server.extend(
        [
            call("days_between", {"start": "2024-01-01", "end": "2024-03-01"}),
            call("delete_all_files", {"confirm": True}),
            call("call_tool", {"name": "delete_all_files", "arguments": {"confirm": True}}),
            say("60 days; I cannot delete files."),
        ]
    )
    assert run(runner(tray, server), MATH) == "60 days; I cannot delete files."
    assert "days_between" not in server.tool_names(0)
    assert ("days_between", {"start": "2024-01-01", "end": "2024-03-01"}) in catalog.CALLS
    assert "60" in tool_results(server, 1)[-1]
    assert all("delete_all_files" not in server.tool_names(i) for i in range(4))
    assert not [c for c in catalog.CALLS if c[0] == "delete_all_files"]
    assert "no tool with that name" in tool_results(server, 2)[-1]  # ADK refused it
    assert "cannot run here" in tool_results(server, 3)[-1]  # and so did call_tool
    assert ("days_between", "unlisted_call") in [(r[2], r[3]) for r in rows("s1", "escape")]
    assert [r[2] for r in rows("s1", "used")] == ["days_between"]


def test_adk_append_reveal_keeps_tools_and_runs_call_tool(
    make_trinket: Any, server: ScriptedServer, rows: Any, completed: list[tuple[str, int]]
) -> None:
    """``reveal = "append"`` (the default): every call offers the same tools=, a revealed tool
    is listed to the model (load answer; a note before its turn's user message) and runs
    through call_tool or by name; the agent's own tool runs beside tooltray's."""
    tray = AdkTray(make_trinket(reveal="append", growth="every_turn"), "s1")
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
    adk = runner(tray, server, [shout])
    assert run(adk, MATH) == "Friday, then Saturday."
    assert run(adk, "What is the weather forecast for Oslo?") == "Sunny."
    offered = [server.tool_names(i) for i in range(len(server.requests))]
    assert "call_tool" in offered[0] and "day_of_week" not in offered[0]
    assert offered[0][-1] == "shout"  # the agent's own tool, after tooltray's
    assert all(names == offered[0] for names in offered)
    assert len({str(r["messages"][0]) for r in server.requests}) == 1  # the system text too
    turn_two = [m for m in server.requests[4]["messages"] if m["role"] == "user"][-1]
    assert "Tools now available:" in str(turn_two["content"])
    assert "weather_forecast(" in str(turn_two["content"])
    session = asyncio.run(
        adk.session_service.get_session(app_name="tests", user_id="u", session_id="adk-1")
    )
    assert session is not None
    stored = [e.content.parts[0].text for e in session.events if e.author == "user" and e.content]
    assert "Tools now available:" not in str(stored)  # the session keeps the user's text
    assert ("weather_forecast", {"city": "Oslo", "days": 1}) in catalog.CALLS
    assert "SUNNY!" in tool_results(server, 6)[-1]
    used = [r[2] for r in rows("s1", "used")]
    assert used == ["day_of_week", "day_of_week", "weather_forecast"]
    assert completed == [("s1", 1), ("s1", 2)]


def test_adk_sessions_are_tooltray_sessions_by_default(
    make_trinket: Any, server: ScriptedServer, rows: Any, db_url: str, completed: Any
) -> None:
    """Without a fixed session id, each ADK session is its own tooltray session: what one loads
    and uses never shows in the other."""
    tray = AdkTray(make_trinket(reveal="prefix"))
    server.extend(
        [
            call("load_tools", {"tools": ["day_of_week"]}),
            call("day_of_week", {"date": "2024-03-01"}),
            say("It was a Friday."),
            say("Hello."),
        ]
    )
    adk = runner(tray, server)
    assert run(adk, MATH, session="adk-a") == "It was a Friday."
    assert run(adk, MATH, session="adk-b") == "Hello."
    assert "day_of_week" in server.tool_names(2) and "day_of_week" not in server.tool_names(3)
    assert "day_of_week" in stored_loaded(db_url, "adk-a")
    assert "day_of_week" not in stored_loaded(db_url, "adk-b")
    assert [r[2] for r in rows("adk-a", "used")] == ["day_of_week"]
    assert rows("adk-b", "used") == []
    assert completed == [("adk-a", 1), ("adk-b", 1)]
    assert tray.progress == {}  # each run's place is dropped when it ends
