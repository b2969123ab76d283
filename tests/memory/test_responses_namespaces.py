"""A replayed Responses ``function_call`` of a deferred tool gets its ``namespace`` back before it
is sent (the API answers 400 "Missing namespace for function_call" without it), checked against
the openai SDK's own types on a real trinket and store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openai.types.responses import ResponseFunctionToolCall
from openai.types.responses.response_input_item_param import ResponseInputItemParam
from pydantic import TypeAdapter

from tooltray.memory.adapters import NativeDeferral
from tooltray.tools.deferred import complete_namespaces, tool_namespaces

from .test_provider_requests import HISTORY, trinket_on, two_turns, validate

ITEM: TypeAdapter[Any] = TypeAdapter(ResponseInputItemParam)


def replayed(name: str) -> list[dict[str, Any]]:
    """The history after the model called ``name``, replayed chat-style (no namespace in it)."""
    function = {"name": name, "arguments": "{}"}
    call = {"id": "call_9", "type": "function", "function": function}
    result = {"role": "tool", "tool_call_id": "call_9", "content": "done"}
    return [*HISTORY, {"role": "assistant", "content": "", "tool_calls": [call]}, result]


def test_the_request_completes_a_deferred_tools_namespace(tmp_path: Path) -> None:
    with trinket_on(tmp_path, "responses") as trinket:
        _, _, view = two_turns(trinket)
        deferred = next(s for s in view.deferred if s.bundle is not None)
        history = replayed(deferred.name)
        body = trinket.prepare("s", history).request(history)
    validate("responses", body)
    calls = [i for i in body["input"] if i.get("type") == "function_call"]
    assert calls == [
        {
            "type": "function_call",
            "call_id": "call_9",
            "name": deferred.name,
            "arguments": "{}",
            "namespace": deferred.bundle,
        }
    ]
    assert tool_namespaces(body["tools"])[deferred.name] == deferred.bundle


def test_only_a_namespaced_call_without_one_changes(tmp_path: Path) -> None:
    tools = [
        {"type": "function", "name": "top", "parameters": {}, "strict": False},
        {
            "type": "namespace",
            "name": "travel",
            "description": "Travel tools",
            "tools": [{"type": "function", "name": "book", "defer_loading": True}],
        },
    ]
    sdk_call = ResponseFunctionToolCall(
        type="function_call", call_id="c1", name="book", arguments="{}", status="completed"
    ).model_dump(exclude_none=True)
    named = {**sdk_call, "call_id": "c2", "namespace": "travel"}
    top = {**sdk_call, "call_id": "c3", "name": "top"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    items = [sdk_call, named, top, output, {"role": "user", "content": "hi"}]
    done = complete_namespaces(items, tools)
    assert done[0] == {**sdk_call, "namespace": "travel"} and "namespace" not in sdk_call
    assert done[1:] == items[1:]
    for item in done:
        ITEM.validate_python(item)


def test_native_deferral_completes_its_own_input(tmp_path: Path) -> None:
    with trinket_on(tmp_path, "responses") as trinket:
        native = NativeDeferral(trinket, "n1", "responses")
        native.start(["What's the weather in Paris tomorrow?"])
        owners = tool_namespaces(native.tools())
        name, namespace = next(iter(owners.items()))
        call = {"type": "function_call", "call_id": "c", "name": name, "arguments": "{}"}
        assert native.complete([call]) == [{**call, "namespace": namespace}]
