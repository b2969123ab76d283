"""Tool calls written as JSON inside a model's text reply (the text path, no native tool calling).

Small models rarely write the exact format they were shown. The parser takes the first JSON value
in the reply that looks like a call, wherever it sits (code fences, ``<tool_call>`` tags, chatter
before or after), and accepts the shapes models actually produce::

    {"tool": "add", "arguments": {"a": 1}}
    {"name": "add", "parameters": {"a": 1}}
    {"type": "function", "function": {"name": "add", "arguments": "{\\"a\\": 1}"}}
    {"tool_calls": [...]}   or   [{"tool": ...}, {"tool": ...}]

A JSON value that only mentions a ``name`` with no arguments is data, not a call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tooltray.tools.spec import NOT_JSON, TOO_DEEP, decode_arguments

NAME_KEYS = ("tool", "tool_name", "function_name")
ARG_KEYS = ("arguments", "parameters", "args", "input", "params")
RESULT_MARKER = "[tool result"
_PREFIXES = ("functions.", "function.", "tools.", "tool.")


@dataclass(frozen=True)
class TextCall:
    """One tool call found in a reply: the name as written and its arguments.

    ``arguments`` is a dict when the model wrote an object; anything else (a bad string, a list)
    is kept as written so the agent can tell the model what was wrong.
    """

    name: str
    arguments: Any = field(default_factory=dict)


def _clean_name(name: str) -> str:
    name = name.strip().strip("`'\"").strip()
    for prefix in _PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :]
    return name


def _decode_args(value: Any) -> Any:
    decoded = decode_arguments(value.strip() if isinstance(value, str) else value)
    return value if decoded.fault in (NOT_JSON, TOO_DEEP) else decoded.value


def _from_function(node: Mapping[str, Any]) -> TextCall | None:
    fn = node.get("function")
    if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
        return TextCall(_clean_name(fn["name"]), _decode_args(_first_args(fn)))
    if isinstance(fn, str) and fn.strip():
        return TextCall(_clean_name(fn), _decode_args(_first_args(node)))
    return None


def _first_args(node: Mapping[str, Any]) -> Any:
    for key in ARG_KEYS:
        if key in node:
            return node[key]
    return None


def call_from(node: Any) -> TextCall | None:
    """The call ``node`` describes, or ``None`` when it is not shaped like a call."""
    if not isinstance(node, Mapping):
        return None
    for key in NAME_KEYS:
        if isinstance(node.get(key), str) and node[key].strip():
            return TextCall(_clean_name(node[key]), _decode_args(_first_args(node)))
    if "function" in node:
        return _from_function(node)
    has_args = any(key in node for key in ARG_KEYS)
    if isinstance(node.get("name"), str) and node["name"].strip() and has_args:
        return TextCall(_clean_name(node["name"]), _decode_args(_first_args(node)))
    return None


def calls_from(value: Any) -> list[TextCall]:
    """Every call in one decoded JSON value (a call, a list of calls, or ``{"tool_calls": []}``)."""
    if isinstance(value, Mapping) and isinstance(value.get("tool_calls"), list):
        value = value["tool_calls"]
    if isinstance(value, list):
        found = [call_from(item) for item in value]
        return [c for c in found if c is not None] if all(found) else []
    single = call_from(value)
    return [single] if single is not None else []


def parse_tool_calls(text: str | None) -> list[TextCall]:
    """The tool calls in a model reply, in order; empty when the reply is a plain answer."""
    if not text:
        return []
    decoder = json.JSONDecoder()
    i = 0
    while i < len(text):
        start = _next_open(text, i)
        if start < 0:
            return []
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            i = start + 1
            continue
        calls = calls_from(value)
        if calls:
            return calls
        i = end
    return []


def _next_open(text: str, start: int) -> int:
    brace, bracket = text.find("{", start), text.find("[", start)
    found = [p for p in (brace, bracket) if p >= 0]
    return min(found) if found else -1


def result_message(name: str, result: str) -> dict[str, Any]:
    """How a tool result goes back to a text-path model: a user message with a clear marker."""
    return {"role": "user", "content": f"{RESULT_MARKER}: {name}]\n{result}"}


def is_result_message(message: Mapping[str, Any]) -> bool:
    """True for the tool-result messages of the text path (they are not user turns)."""
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, str)
        and content.startswith(RESULT_MARKER)
    )
