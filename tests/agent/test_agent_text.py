"""The text path: tools listed in the system prompt, calls parsed out of the model's text."""

from __future__ import annotations

from typing import Any

import catalog
from conftest import history
from scripted_server import ScriptedServer, say

from tooltray.memory.agent.textcalls import is_result_message

DAY_CALL = '{"tool": "day_of_week", "arguments": {"date": "2024-03-01"}}'


def system(server: ScriptedServer, i: int) -> str:
    first = server.requests[i]["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def test_an_unlisted_tool_runs_and_is_loaded_as_an_escape(
    make_agent: Any, server: ScriptedServer, db_url: str
) -> None:
    agent = make_agent(path="text")
    server.extend(
        [
            say(f"Let me check.\n```json\n{DAY_CALL}\n```"),
            say("It was a Friday."),
        ]
    )
    result = agent.run_turn("t1", [], "Please multiply 17 by 23 for me.")
    assert "tools" not in server.requests[0]
    assert "multiply(" in system(server, 0) and "day_of_week(" not in system(server, 0)
    assert ("day_of_week", {"date": "2024-03-01"}) in catalog.CALLS
    assert result.calls[0].status == "ok" and result.calls[0].result == "Friday"
    assert "day_of_week(" in system(server, 1)
    assert "day_of_week" in agent.trinket.loaded("t1")
    assert [(r[2], r[3]) for r in history(db_url, "t1", "escape")] == [
        ("day_of_week", "unlisted_call")
    ]
    assert result.answer == "It was a Friday."


def test_tool_results_are_not_counted_as_user_turns(
    make_agent: Any, server: ScriptedServer
) -> None:
    agent = make_agent(path="text")
    server.extend(
        [
            say('{"name": "add", "arguments": {"a": 2, "b": 3}}'),
            say('{"tool": "multiply", "arguments": {"a": 5, "b": "x"}}'),
            say("5"),
            say("Bye."),
        ]
    )
    results = agent.run_conversation("t1", ["What is 2 plus 3?", "Thanks."])
    first = results[0]
    assert [c.status for c in first.calls] == ["ok", "invalid"]
    marked = [m for m in first.messages if is_result_message(m)]
    assert len(marked) == 2 and marked[0]["content"].endswith("\n5")
    assert [r.turn for r in results] == [1, 2]
    sent = server.requests[2]["messages"]
    assert sent[-1]["content"].startswith("[tool result: multiply]\nError: bad arguments")


def test_a_text_model_sees_the_bundle_menu_and_loads_a_bundle_by_a_text_call(
    make_agent: Any, server: ScriptedServer
) -> None:
    agent = make_agent(path="text")
    load = '{"tool": "load_tools", "arguments": {"tools": ["calendar"]}}'
    server.extend([say(load), say(DAY_CALL), say("A Friday.")])
    result = agent.run_turn("t1", [], "Please multiply 17 by 23 for me.")
    first = system(server, 0)
    assert "- calendar: dates, weekdays and day counts" in first
    assert '{"tool": "load_tools", "arguments": {"tools": ["<bundle>"]}}' in first
    assert first.index("- calendar") < first.index("Tools:\n")
    assert "day_of_week(" not in first and "day_of_week(" in system(server, 1)
    assert [c.status for c in result.calls] == ["meta", "ok"]
