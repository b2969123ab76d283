"""The user's words a client passes to the gateway: a hint, read from the request that carries it.

MCP carries no user messages, so a session would start with CORE and pinned tools only. A client
that can pass the user's text puts it in the request's ``_meta`` (``"tooltray/hint"``, any
transport) or, over HTTP, in an ``X-Tooltray-Hint`` header (percent-encoded UTF-8, as header
values are Latin-1); a session's first ``load_tools`` query counts as one too. Each hint is the
user message of a new turn of the session's conversation, which the trinket selects from as a
``prepare`` with that text would. The hint is read off a request already bound to its session
(``SessionKeys.of``), so it reaches only the caller's own session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

HINT_META = "tooltray/hint"
HINT_HEADER = "x-tooltray-hint"
MAX_HINT_CHARS = 8_000  # a user message's worth; a longer one is cut, never refused


def hint_of(ctx: Any) -> str | None:
    """The hint a request carries (``_meta`` first, then the header), or ``None``."""
    meta = getattr(ctx, "meta", None)
    value = meta.get(HINT_META) if isinstance(meta, Mapping) else None
    if not isinstance(value, str) or not value.strip():
        headers = getattr(getattr(ctx, "request", None), "headers", None)
        raw = headers.get(HINT_HEADER) if headers is not None else None
        value = unquote(raw) if isinstance(raw, str) else None
    if not value or not value.strip():
        return None
    return value.strip()[:MAX_HINT_CHARS]


class Conversations:
    """Per session, the user texts the gateway was given, at the turns they came in.

    The trinket counts a turn per user message; the gateway counts one per forwarded call. A
    hint opens the turn after the current one, and the turns between hints are empty messages
    (which selection skips), so the trinket's turn and the gateway's stay the same number.
    """

    def __init__(self) -> None:
        self._said: dict[str, dict[int, str]] = {}

    def has_text(self, session: str) -> bool:
        """Whether any text reached ``session`` yet."""
        return bool(self._said.get(session))

    def repeats(self, session: str, text: str) -> bool:
        """Whether ``text`` is the session's latest hint again (a header sent on every request
        of one turn is one message, not a turn per request)."""
        said = self._said.get(session) or {}
        return bool(said) and said[max(said)] == text

    def add(self, session: str, turn: int, text: str) -> list[dict[str, Any]]:
        """The session's conversation with ``text`` as the user message of ``turn`` (from 1)."""
        said = self._said.setdefault(session, {})
        said[turn] = text
        return [{"role": "user", "content": said.get(t, "")} for t in range(1, turn + 1)]

    def forget(self, session: str) -> None:
        """Drop a released session's texts."""
        self._said.pop(session, None)
