"""Reveal by appending: tools loaded after a session boundary go at the end of the context.

A prompt cache re-uses only the longest common prefix of two requests, and every provider puts
tools first, so a tool written into ``tools=`` mid-session re-prefills the system text and the
whole conversation after it. With ``reveal = "append"`` the prefix holds what the last boundary
chose and stays byte-stable until the next one (start, resume, compaction, where used revealed
tools fold into it and idle ones leave). A tool tooltray reveals itself at a later turn's start
is listed in a note woven before that turn's user message, in every later request alike; a tool
the model loads is listed in the ``load_tools`` answer, which the conversation keeps. Natively
the model calls a revealed tool through the ``call_tool`` bridge (it is not in ``tools=``); on
the text path it calls it like any listed tool.

Providers that defer tools natively (Anthropic ``defer_loading``, OpenAI Responses namespaces)
need neither note nor bridge: every allowed tool outside the prefix is declared deferred in
``tools=`` and a reveal is the provider's own search answer (:mod:`.requests`), until the
provider refuses deferral for a session (it is then ``bridged``, see :func:`defers`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooltray.tools.deferred import DEFERRED_PATHS
from tooltray.tools.render import render_text
from tooltray.tools.spec import ToolSpec

REVEAL_HEAD = "Tools now available:"
BRIDGE_HINT = 'Call them through call_tool: {"name": "<tool>", "arguments": {...}}.'
TEXT_HINT = "Call them like the listed tools."


def split_loaded(
    loaded: Sequence[str], prefix: Sequence[str] | None
) -> tuple[list[str], list[str]]:
    """``(prefix tools, revealed tools)``: without a stored prefix every loaded tool is in it.

    A prefix tool unloaded mid-session stays in the prefix until the next boundary (the prefix
    never changes between boundaries); the loaded tools outside the prefix are revealed.
    """
    if prefix is None:
        return list(loaded), []
    inside = set(prefix)
    return list(prefix), [n for n in loaded if n not in inside]


def defers(path: str, reveal: str, meta: Mapping[str, object]) -> bool:
    """Whether a session reveals the provider's way: ``reveal = "append"`` on a path that defers
    tools, unless the provider refused deferral for this session (meta ``bridged``)."""
    return reveal == "append" and path in DEFERRED_PATHS and not meta.get("bridged")


def adds(path: str, addition: bool, meta: Mapping[str, object]) -> bool:
    """Whether a deferring session reveals with Anthropic ``tool_addition`` blocks: the
    ``tool_addition`` setting on the anthropic path, unless the model refused them (meta
    ``addition_refused``)."""
    return addition and path == "anthropic" and not meta.get("addition_refused")


def note(specs: Sequence[ToolSpec], native: bool) -> str:
    """The text that reveals ``specs``: one line each, and how to call them on this path."""
    if not specs:
        return ""
    hint = BRIDGE_HINT if native else TEXT_HINT
    return f"{REVEAL_HEAD}\n{render_text(list(specs))}\n{hint}"


def stored_reveals(raw: object) -> list[tuple[int, list[str]]]:
    """The session meta's ``reveals`` as ``(user turn, names)``; malformed rows are skipped."""
    out: list[tuple[int, list[str]]] = []
    for row in raw if isinstance(raw, list) else []:
        if isinstance(row, (list, tuple)) and len(row) == 2 and isinstance(row[0], int):
            names = [n for n in row[1] if isinstance(n, str)] if isinstance(row[1], list) else []
            out.append((row[0], names))
    return out


def weave(history: Sequence[dict[str, Any]], notes: Mapping[int, str]) -> list[dict[str, Any]]:
    """``history`` with each note put before the text of the user message of its turn.

    Turn ``k`` is the ``k``-th user message. The note joins that message rather than standing
    alone, so the roles still alternate (many chat templates require it) and nothing before the
    message changes: the cached prefix ends where the new turn begins.
    """
    if not notes:
        return list(history)
    out: list[dict[str, Any]] = []
    turn = 0
    for message in history:
        if message.get("role") == "user":
            turn += 1
            if notes.get(turn):
                message = {**message, "content": _prepend(notes[turn], message.get("content"))}
        out.append(message)
    return out


def _prepend(text: str, content: Any) -> Any:
    if isinstance(content, list):
        return [{"type": "text", "text": text}, *content]
    return f"{text}\n\n{content}" if content else text
