"""Tool-result compression: long results are shortened in the prompt behind a handle.

The full text is stored (in the store, and in this process) and the model pages through it with
the ``read_result(handle, offset)`` meta-tool, so nothing is lost and the context stays small.

A handle ends in a tag of its session (64 bits of a hash of the session id), and the model's
route (:meth:`ResultShelf.reader`) reads only its own session's handles: a handle seen by, or
guessed in, one session (one gateway client) does not open another's results.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import partial
from typing import Protocol

Reader = Callable[[str, int], str]


class ResultStore(Protocol):
    """The two store methods the shelf needs."""

    def put_result(self, handle: str, session_id: str, turn: int, tool: str, content: str) -> None:
        """Keep ``content`` under ``handle``."""

    def get_result(self, handle: str) -> str | None:
        """The content kept under ``handle``, if any."""


class ResultShelf:
    """Shortens long tool results and serves their pages back.

    Args:
        store: where full results live (a database, or the in-memory store).
        max_chars: results longer than this are shortened (the page size of ``read_result``).
    """

    def __init__(self, store: ResultStore, max_chars: int = 1500) -> None:
        self.store = store
        self.max_chars = max_chars
        self._local: dict[str, str] = {}
        self._owned: dict[str, list[str]] = {}  # session -> its handles held in _local

    def shorten(self, session_id: str, turn: int, tool: str, result: str) -> str:
        """``result`` itself when short; else its first page and a handle to read the rest."""
        if len(result) <= self.max_chars:
            return result
        digest = hashlib.sha256(
            f"{session_id}\x00{turn}\x00{tool}\x00{result}".encode()
        ).hexdigest()
        handle = f"r-{digest[:16]}{session_tag(session_id)}"
        self._local[handle] = result
        self._owned.setdefault(session_id, []).append(handle)
        self.store.put_result(handle, session_id, turn, tool, result)
        return self._page(handle, result, 0)

    def reader(self, session_id: str) -> Reader:
        """``read`` for the model of ``session_id``: another session's handle is refused."""
        return partial(self.read_as, session_id)

    def read_as(self, session_id: str, handle: str, offset: int = 0) -> str:
        """:meth:`read` for the model of ``session_id``: another session's handle is refused."""
        if not handle.endswith(session_tag(session_id)):
            return (
                f"Error: result {handle[:40]!r} belongs to another session; read the "
                "handles shown in this session's results."
            )
        return self.read(handle, offset)

    def forget(self, session_id: str) -> None:
        """Drop this process's copies of the session's results (the store keeps them)."""
        for handle in self._owned.pop(session_id, ()):
            self._local.pop(handle, None)

    def read(self, handle: str, offset: int = 0) -> str:
        """The page of a stored result starting at ``offset`` (a clear message if unknown)."""
        content = self._local.get(handle)
        if content is None:
            content = self.store.get_result(handle)
        if content is None:
            return (
                f"Error: no stored result has handle {handle!r}; "
                "use the handle shown in the shortened result."
            )
        if offset >= len(content):
            return f"[{handle}: offset {offset} is past the end ({len(content)} characters).]"
        return self._page(handle, content, offset)

    def _page(self, handle: str, content: str, offset: int) -> str:
        end = offset + self.max_chars
        page = content[offset:end]
        if end >= len(content):
            return page + f"\n[{handle}: end of result, {len(content)} characters.]"
        return page + (
            f"\n[{handle}: shortened; {len(content) - end} more characters. "
            f'Call read_result({{"handle": "{handle}", "offset": {end}}}) for more.]'
        )


def session_tag(session_id: str) -> str:
    """The 16 hex digits that end every handle of ``session_id``'s results."""
    return hashlib.sha256(f"tooltray-session\x00{session_id}".encode()).hexdigest()[:16]
