"""Tool-result compression: long results are shortened in the prompt behind a handle.

The full text is stored (in the store, and in this process) and the model pages through it with
the ``read_result(handle, offset)`` meta-tool, so nothing is lost and the context stays small.
"""

from __future__ import annotations

import hashlib
from typing import Protocol


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

    def shorten(self, session_id: str, turn: int, tool: str, result: str) -> str:
        """``result`` itself when short; else its first page and a handle to read the rest."""
        if len(result) <= self.max_chars:
            return result
        digest = hashlib.sha256(
            f"{session_id}\x00{turn}\x00{tool}\x00{result}".encode()
        ).hexdigest()
        handle = f"r-{digest[:16]}"
        self._local[handle] = result
        self.store.put_result(handle, session_id, turn, tool, result)
        return self._page(handle, result, 0)

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
