"""Turn one ordered list of :class:`ToolSpec` into what each model API receives.

One selection drives every path: the text block for models without native tool calling, and
the ``tools=`` entries for OpenAI Chat Completions, OpenAI Responses and Anthropic. Same input,
same bytes: JSON goes through :func:`canonical_json` (sorted keys, compact separators), so a
stable tool set keeps the provider's prompt cache warm.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from typing import Any

from tooltray.tools.errors import ConfigError
from tooltray.tools.spec import ToolSpec

RENDER_PATHS: tuple[str, ...] = ("text", "openai", "responses", "anthropic")
NATIVE_PATHS: tuple[str, ...] = ("openai", "responses", "anthropic")
_SCALARS = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "null",
    "object": "dict",
}
_MAX_ENUM = 5


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys, no spaces and real UTF-8: the byte-stable form of a payload."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _union(parts: list[str]) -> str:
    return "|".join(dict.fromkeys(parts))


def type_label(schema: Any) -> str:
    """A short type for the text path: ``str``, ``int``, ``list[str]``, ``"a"|"b"``, ``any``."""
    if not isinstance(schema, dict):
        return "any"
    enum = schema.get("enum")
    if isinstance(enum, list) and 0 < len(enum) <= _MAX_ENUM:
        return _union([json.dumps(v, ensure_ascii=False) for v in enum])
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return _union([type_label(s) for s in schema[key]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([type_label({**schema, "type": k}) for k in kind])
    if kind == "array":
        items = schema.get("items")
        return f"list[{type_label(items)}]" if isinstance(items, dict) else "list"
    if isinstance(schema.get("$ref"), str):
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    return _SCALARS.get(str(kind), "any")


def render_line(spec: ToolSpec) -> str:
    """One text-path line: ``name(arg: type, opt?: type) — First sentence.``"""
    props = spec.parameters.get("properties") or {}
    required = set(spec.parameters.get("required") or ())
    args = ", ".join(
        f"{arg}{'' if arg in required else '?'}: {type_label(sub)}" for arg, sub in props.items()
    )
    head = f"{spec.name}({args})"
    first = spec.first_sentence()
    return f"{head} — {first}" if first else head


def render_text(tools: Sequence[ToolSpec]) -> str:
    """The text block: one line per tool, in the given order, joined by newlines."""
    return "\n".join(render_line(t) for t in tools)


def openai_chat_tool(spec: ToolSpec) -> dict[str, Any]:
    """One Chat Completions entry: ``{"type": "function", "function": {...}}``."""
    function = {
        "name": spec.name,
        "description": spec.description,
        "parameters": copy.deepcopy(spec.parameters),
    }
    return {"type": "function", "function": function}


def openai_responses_tool(spec: ToolSpec) -> dict[str, Any]:
    """One Responses API entry (flat; ``strict: false`` because the API defaults to strict)."""
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": copy.deepcopy(spec.parameters),
        "strict": False,
    }


def anthropic_tool(spec: ToolSpec) -> dict[str, Any]:
    """One Anthropic Messages entry: ``{"name", "description", "input_schema"}``."""
    return {
        "name": spec.name,
        "description": spec.description,
        "input_schema": copy.deepcopy(spec.parameters),
    }


def render_openai_chat(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """``tools=`` for OpenAI Chat Completions (and compatible servers: vLLM, llama.cpp, ...)."""
    return [openai_chat_tool(t) for t in tools]


def render_openai_responses(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """``tools=`` for the OpenAI Responses API."""
    return [openai_responses_tool(t) for t in tools]


def render_anthropic(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """``tools=`` for the Anthropic Messages API."""
    return [anthropic_tool(t) for t in tools]


_ONE: dict[str, Callable[[ToolSpec], dict[str, Any]]] = {
    "openai": openai_chat_tool,
    "responses": openai_responses_tool,
    "anthropic": anthropic_tool,
}


def render_native(path: str, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """``tools=`` entries for a native ``path`` (``text`` has none and renders as OpenAI chat)."""
    one = _ONE.get(path, openai_chat_tool)
    return [one(t) for t in tools]


def check_path(path: str) -> str:
    """Return ``path`` if it is one of :data:`RENDER_PATHS`, else raise ``ConfigError``."""
    if path not in RENDER_PATHS:
        raise ConfigError(f"Unknown render path {path!r}: use one of {', '.join(RENDER_PATHS)}.")
    return path


def render_one(path: str, spec: ToolSpec) -> str:
    """One tool as the exact string it contributes on ``path`` (line or canonical JSON)."""
    if check_path(path) == "text":
        return render_line(spec)
    return canonical_json(_ONE[path](spec))


def render(path: str, tools: Sequence[ToolSpec]) -> str:
    """The canonical string sent for ``tools`` on ``path``: the text block or the JSON list."""
    if check_path(path) == "text":
        return render_text(tools)
    return canonical_json(render_native(path, tools))
