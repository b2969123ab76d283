"""Tools callable from code the model writes: per-tool ``allowed_callers`` and the code tool.

Anthropic's code execution and OpenAI Responses' ``programmatic_tool_calling`` let a model call
tools from a program it runs, so intermediate results need not pass through its context. A tool
says who may call it in ``allowed_callers``; the code tool itself must be in ``tools=``. With the
``code_callers`` setting, ``both`` marks every function tool callable directly and from code,
``code`` from code only; the meta-tools (and a Responses ``tool_search``) stay direct, since
the model calls them itself to find tools. The code tool goes last, so ``tools=`` keeps its
order and stays byte-stable between boundaries.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Literal

CodeCallers = Literal["off", "both", "code"]
CALLER = {"anthropic": "code_execution_20260120", "responses": "programmatic"}
CODE_TOOL: dict[str, dict[str, Any]] = {
    "anthropic": {"type": "code_execution_20260120", "name": "code_execution"},
    "responses": {"type": "programmatic_tool_calling"},
}


def callers(path: str, mode: CodeCallers) -> list[str]:
    """``allowed_callers`` for ``mode`` on ``path`` (empty: leave the tools as they are)."""
    code = CALLER.get(path)
    if code is None or mode == "off":
        return []
    return ["direct", code] if mode == "both" else [code]


def code_callable(
    path: str, tools: Sequence[dict[str, Any]], mode: CodeCallers, direct: Collection[str] = ()
) -> list[dict[str, Any]]:
    """``tools`` with ``allowed_callers`` on each function tool not named in ``direct``, inside
    Responses namespaces too, and the provider's code tool appended (unchanged on other paths
    or with ``mode = "off"``)."""
    who = callers(path, mode)
    if not who:
        return list(tools)
    marked = [_marked(tool, who, direct) for tool in tools]
    return [*marked, dict(CODE_TOOL[path])]


def _marked(tool: dict[str, Any], who: list[str], direct: Collection[str]) -> dict[str, Any]:
    if tool.get("type") == "namespace":
        return {**tool, "tools": [_marked(t, who, direct) for t in tool.get("tools") or ()]}
    if tool.get("type", "function") != "function" or tool.get("name") in direct:
        return tool
    return {**tool, "allowed_callers": list(who)}
