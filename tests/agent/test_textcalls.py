"""Parsing tool calls out of model text: the shapes small models really write."""

from __future__ import annotations

import pytest

from tooltray.memory.agent.textcalls import (
    TextCall,
    is_result_message,
    parse_tool_calls,
    result_message,
)


@pytest.mark.parametrize(
    "text",
    [
        '{"tool": "add", "arguments": {"a": 2, "b": 3}}',
        '```json\n{"tool": "add", "arguments": {"a": 2, "b": 3}}\n```',
        'Sure! Let me compute that.\n{"tool": "add", "arguments": {"a": 2, "b": 3}} Done.',
        '{"name": "add", "arguments": {"a": 2, "b": 3}}',
        '{"name": "add", "parameters": {"a": 2, "b": 3}}',
        '{"type": "function", "function": {"name": "add", "arguments": "{\\"a\\": 2, \\"b\\": 3}"}}',  # noqa: E501
        '<tool_call>\n{"name": "functions.add", "arguments": {"a": 2, "b": 3}}\n</tool_call>',
        '{"tool_calls": [{"function": {"name": "add", "arguments": {"a": 2, "b": 3}}}]}',
        'Result [1] first: {"tool": "add", "arguments": "{\\"a\\": 2, \\"b\\": 3}"}',
    ],
)
def test_each_shape_gives_the_same_call(text: str) -> None:
    assert parse_tool_calls(text) == [TextCall("add", {"a": 2, "b": 3})]


def test_a_list_gives_every_call_in_order() -> None:
    text = '[{"tool": "a", "arguments": {}}, {"tool": "b"}]'
    assert [c.name for c in parse_tool_calls(text)] == ["a", "b"]


@pytest.mark.parametrize(
    "text",
    [
        "The answer is 5.",
        '{"name": "Bob", "age": 3}',
        '{"answer": 5}',
        "[1, 2, 3]",
        '{"tool": ',
        "",
        None,
    ],
)
def test_plain_answers_and_data_are_not_calls(text: str | None) -> None:
    assert parse_tool_calls(text) == []


def test_bad_arguments_are_kept_as_written() -> None:
    [found] = parse_tool_calls('{"tool": "add", "arguments": "a=2, b=3"}')
    assert found.arguments == "a=2, b=3"


def test_result_messages_are_marked() -> None:
    message = result_message("add", "5")
    assert message["role"] == "user" and is_result_message(message)
    assert not is_result_message({"role": "user", "content": "what is 2+3?"})
    assert not is_result_message({"role": "tool", "content": "[tool result: add]"})
