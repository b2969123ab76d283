"""The public API's boundary: session ids, messages and meta-tool calls checked before any work.

A value the store cannot hold (a tuple for a session id, a million-character id, a name that is
a list) used to get as far as a write, create a session row, or fail deep inside; each public
method of the trinket now passes its inputs through here first. Bad caller input raises
:class:`~tooltray.tools.errors.InputError` naming the fix; what a model sent (meta-tool names and
arguments, message text) is cleaned instead, since a meta-tool call must never raise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import count
from typing import Any

from tooltray.tools.clean import clean_text, clean_value, has_bad_text
from tooltray.tools.errors import InputError, shown

MAX_SESSION_ID = 256
"""Characters in a session id: room for any UUID, URL-safe token or ``prefix:uuid`` scheme."""


def session_id(value: object) -> str:
    """``value`` when it is a usable session id.

    Raises:
        InputError: not a string, empty, longer than :data:`MAX_SESSION_ID` characters, or
            holding a NUL or a lone surrogate (no database can store it).
    """
    if not isinstance(value, str):
        raise InputError(
            f"session id must be a string, got {type(value).__name__} {shown(value, 40)}: "
            "pass one string per conversation (say, a UUID)"
        )
    if not value or len(value) > MAX_SESSION_ID:
        raise InputError(
            f"session id {shown(value, 40)} must have 1 to {MAX_SESSION_ID} characters: "
            "pass a short id per conversation (say, a UUID) and keep the rest elsewhere"
        )
    if has_bad_text(value):
        raise InputError(
            f"session id {shown(value, 40)} holds a NUL or a lone surrogate, which no "
            "database stores: pass valid Unicode text"
        )
    return value


def messages(value: object) -> list[dict[str, Any]]:
    """``value`` as a list of message dicts, each with a string ``role`` (or ``type``); text that
    no encoder takes (lone surrogates, NUL) is replaced in copies; the caller's stay unchanged.

    Raises:
        InputError: not a sequence (a string counts as none), or an item without a role.
    """
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise InputError(
            f"messages must be a list of message dicts, got {type(value).__name__}: "
            'pass the conversation as [{"role": "user", "content": "..."}, ...]'
        )
    return list(map(_message, value, count()))


def _message(message: object, index: int) -> dict[str, Any]:
    """One message: a dict with a string ``role``, or an OpenAI Responses input item (a string
    ``type``: ``function_call``, ``function_call_output``, ... carry no role)."""
    if not isinstance(message, Mapping) or not isinstance(
        message.get("role", message.get("type")), str
    ):
        raise InputError(
            f"message {index} must be a dict with a string 'role' (or a Responses item's 'type'),"
            f' got {shown(message, 60)}: pass messages like {{"role": "user", "content": "..."}}'
        )
    for v in message.values():
        if not isinstance(v, str) or has_bad_text(v):
            return {k: clean_value(v) for k, v in message.items()}
    return message if isinstance(message, dict) else dict(message)


def meta_call(name: object, arguments: object) -> tuple[str, Any]:
    """A meta-tool call as text that can be stored: its name cleaned (anything but a string
    becomes its short ``repr``, then refused as not a meta-tool) and every string of its
    arguments cleaned (a query reaches the embedder)."""
    return clean_text(name if isinstance(name, str) else shown(name, 60)), clean_value(arguments)


def text(value: object) -> str:
    """A tool name, reason or result from the caller, as text the store can take."""
    return clean_text(value if isinstance(value, str) else shown(value, 60))
