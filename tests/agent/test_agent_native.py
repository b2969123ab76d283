"""The native path end to end: real trinket, store, embedder, registry and HTTP model server."""

from __future__ import annotations

import json
import re
from typing import Any

import catalog
import pytest
from conftest import history
from scripted_server import ScriptedServer, call, calls, say

from tooltray.memory.store import Store
from tooltray.tools.errors import EmbedderError

MATH = "Please multiply 17 by 23 for me."


def test_load_tools_recovers_a_missed_tool_on_the_next_step(
    make_agent: Any, server: ScriptedServer, db_url: str
) -> None:
    agent = make_agent()
    server.extend(
        [
            call("load_tools", {"tools": ["day_of_week"]}),
            call("day_of_week", {"date": "2024-03-01"}),
            say("It was a Friday."),
        ]
    )
    result = agent.run_turn("s1", [], MATH)
    assert "day_of_week" not in server.tool_names(0)
    assert server.tool_names(0)[:4] == ["load_tools", "unload_tools", "fallback", "read_result"]
    assert "day_of_week" in server.tool_names(1)
    assert [(c.name, c.status) for c in result.calls] == [
        ("load_tools", "meta"),
        ("day_of_week", "ok"),
    ]
    assert result.calls[1].result == "Friday"
    assert ("day_of_week", {"date": "2024-03-01"}) in catalog.CALLS
    assert result.answer == "It was a Friday." and result.steps == 3
    assert result.step_tokens[1] > result.step_tokens[0]
    assert result.eager_tokens > result.step_tokens[0]
    tool_msgs = [m for m in server.requests[2]["messages"] if m["role"] == "tool"]
    assert tool_msgs[-1]["content"] == "Friday"
    assert [r[2] for r in history(db_url, "s1", "used")] == ["day_of_week"]
    with Store(db_url) as store:  # the server's reported usage (1 prompt, 1 output per step)
        (turn,) = store.turns("s1")
    assert (turn.usage_cached, turn.usage_uncached, turn.usage_output) == (0, 3, 3)
    assert turn.prompt_reused and turn.prompt_new  # tooltray's own estimate of the 3 prompts


def test_fallback_lasts_exactly_one_turn(make_agent: Any, server: ScriptedServer) -> None:
    agent = make_agent()
    server.extend(
        [
            call("fallback", {"reason": "I need a temperature converter"}),
            call("celsius_to_fahrenheit", {"celsius": 20}),
            say("68 F"),
            say("You are welcome."),
        ]
    )
    results = agent.run_conversation("s1", ["What is 17 times 23?", "Thanks!"])
    allowed = {s.name for s in agent.trinket.registry.allowed()}
    selected = set(server.tool_names(0))
    assert allowed <= set(server.tool_names(1))
    assert results[0].calls[1].result == "68.0"
    next_turn = set(server.tool_names(3))
    assert next_turn == selected | {"celsius_to_fahrenheit"}
    assert "word_count" not in next_turn and "word_count" not in selected


def test_a_tool_outside_the_allow_list_is_refused_and_recorded(
    make_agent: Any, server: ScriptedServer, db_url: str
) -> None:
    agent = make_agent()
    server.extend(
        [
            call("fallback", {}),
            call("delete_all_files", {"confirm": True}),
            say("I cannot do that."),
        ]
    )
    result = agent.run_turn("s1", [], "Delete all the files on the server.")
    assert all("delete_all_files" not in server.tool_names(i) for i in range(3))
    assert result.calls[1].status == "refused" and result.calls[1].tool is None
    assert "not allowed" in result.calls[1].result
    assert not [c for c in catalog.CALLS if c[0] == "delete_all_files"]
    refused = history(db_url, "s1", "refused")
    assert [(r[2], "delete_all_files" in (r[3] or "")) for r in refused] == [
        ("delete_all_files", True)
    ]
    assert result.answer == "I cannot do that."


def test_bad_calls_become_clear_errors_and_the_turn_goes_on(
    make_agent: Any, server: ScriptedServer
) -> None:
    agent = make_agent()
    server.extend(
        [
            calls(("multiply", {"a": "x"}), ("multiplyy", {"a": 1, "b": 2})),
            call("disk_usage", {"path": "/srv"}),
            call("multiply", raw="{a: 1"),
            say("Sorry, tools failed."),
        ]
    )
    result = agent.run_turn("s1", [], MATH)
    bad, unknown, raised, broken = result.calls
    assert bad.status == "invalid" and "'x' is not of type 'number'" in bad.result
    assert "'b' is a required property" in bad.result and "multiply(a: float" in bad.result
    assert unknown.status == "unknown" and "Did you mean: multiply" in unknown.result
    assert raised.status == "error" and "OSError: permission denied reading /srv" in raised.result
    assert broken.status == "invalid" and "not valid JSON" in broken.result
    assert [c[0] for c in catalog.CALLS] == ["disk_usage"]
    assert result.finished and result.answer == "Sorry, tools failed."
    sent = [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert sent == [bad.result, unknown.result]


def test_a_long_result_is_shortened_and_read_back(make_agent: Any, server: ScriptedServer) -> None:
    agent = make_agent()

    def read_on(body: dict[str, Any]) -> dict[str, Any]:
        handle = re.search(r'"handle": "(r-[0-9a-f]+)"', body["messages"][-1]["content"])
        assert handle is not None
        return call("read_result", {"handle": handle.group(1), "offset": 1500})

    server.extend([call("read_server_log", {"lines": 400}), read_on, say("The log is fine.")])
    result = agent.run_turn("s1", [], "Show me the server log.")
    full = catalog.read_server_log(400)
    shortened, page = result.calls
    assert shortened.full_chars == len(full) and len(shortened.result) < 1700
    assert shortened.result.startswith(full[:1500]) and "read_result" in shortened.result
    assert page.status == "meta" and page.result.startswith(full[1500:3000])


def test_max_steps_ends_the_turn_with_a_clear_message(
    make_agent: Any, server: ScriptedServer, db_url: str
) -> None:
    agent = make_agent(max_steps=2)
    server.extend([call("add", {"a": 1, "b": 2}), call("add", {"a": 3, "b": 4})])
    result = agent.run_turn("s1", [], "Add some numbers.")
    assert not result.finished and "after 2 steps" in result.answer
    assert [c.result for c in result.calls] == ["3", "7"] and len(server.requests) == 2
    assert agent.trinket.state("s1").turn == 1


def test_a_loader_error_in_prepare_does_not_crash_the_turn(
    make_agent: Any, server: ScriptedServer
) -> None:
    agent = make_agent()

    def broken(session_id: str, messages: Any) -> Any:
        raise EmbedderError("embedder down: model file missing")

    agent.trinket.prepare = broken
    server.extend([call("word_count", {"text": "one two three"}), say("3 words")])
    result = agent.run_turn("s1", [], "Count the words.")
    offered = set(server.tool_names(0))
    assert offered == {s.name for s in agent.trinket.registry.allowed()}
    assert result.calls[0].result == "3" and result.answer == "3 words"
    assert all(v.mode == "degraded" for v in result.views)


def test_streaming_option_is_not_required(make_agent: Any, server: ScriptedServer) -> None:
    agent = make_agent()
    server.extend([say("hello")])
    result = agent.run_turn("s1", [], "hi")
    assert server.requests[0].get("stream") in (None, False)
    assert json.dumps(result.messages[-1]) == json.dumps({"role": "assistant", "content": "hello"})


@pytest.mark.parametrize("path", ["text", "responses"])
def test_path_must_match_the_trinket(make_agent: Any, path: str) -> None:
    from tooltray.memory.agent.loop import Agent
    from tooltray.tools.errors import ConfigError

    agent = make_agent()
    if path == "text":
        with pytest.raises(ConfigError, match="Settings\\(path='text'\\)"):
            Agent(agent.trinket, agent.client, "m", path="text")
    else:
        with pytest.raises(ConfigError, match="not supported"):
            Agent(agent.trinket, agent.client, "m", path=path)
