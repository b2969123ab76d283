"""The scripted server speaks Chat Completions well enough for the real openai client."""

from __future__ import annotations

import json

import openai
import pytest
from scripted_server import ScriptedServer, call, say

TOOLS = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]


def client(srv: ScriptedServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.base_url, api_key="x", max_retries=0)


def test_replays_text_and_tool_calls_and_records_requests(server: ScriptedServer) -> None:
    server.extend([call("add", {"a": 1}), say("done")])
    c = client(server)
    first = c.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS
    )
    tc = first.choices[0].message.tool_calls[0]
    assert tc.function.name == "add" and json.loads(tc.function.arguments) == {"a": 1}
    second = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert second.choices[0].message.content == "done"
    assert server.tool_names(0) == ["add"] and server.tool_names(1) == []


def test_streaming(server: ScriptedServer) -> None:
    server.extend([say("streamed text")])
    stream = client(server).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text == "streamed text"


def test_steps_can_depend_on_the_request(server: ScriptedServer) -> None:
    server.extend([lambda body: say(f"you sent {len(body['messages'])} messages")])
    reply = client(server).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    )
    assert reply.choices[0].message.content == "you sent 2 messages"


def test_an_exhausted_script_is_a_server_error(server: ScriptedServer) -> None:
    with pytest.raises(openai.InternalServerError, match="script exhausted"):
        client(server).chat.completions.create(model="m", messages=[])
