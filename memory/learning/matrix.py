"""A growable matrix of past-request vectors, appended at the end and dropped from the front.

The store evicts the oldest rows and adds new ones every learned turn; copying a 10,000 x 384
matrix for each would cost more than the selection it serves. Rows live in a buffer with spare
capacity; eviction only moves a start offset, and the buffer is compacted when it fills up.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray


class RequestMatrix:
    """Past requests in id order: vectors, ids, the tools each one led to and its session (as a
    small integer code, so one session's rows are masked in one vector comparison)."""

    def __init__(self) -> None:
        self._buf: NDArray[np.float32] | None = None
        self._ids = np.zeros(0, np.int64)
        self._sessions = np.zeros(0, np.int64)
        self._codes: dict[str, int] = {}
        self._tools: list[list[str]] = []
        self._start = 0
        self._end = 0
        self.version = 0
        """Counts changes to the live rows: similarities computed at one version stay valid."""

    @property
    def dim(self) -> int | None:
        """The vectors' dimension (``None`` while empty)."""
        return None if self._buf is None else int(self._buf.shape[1])

    def last_id(self) -> int:
        """The newest id held (0 while empty)."""
        return int(self._ids[self._end - 1]) if self._end > self._start else 0

    def view(self) -> tuple[NDArray[np.float32] | None, NDArray[np.int64], list[list[str]]]:
        """The live rows: vectors, ids and tools (views, valid until the next change)."""
        if self._buf is None or self._end == self._start:
            return None, self._ids[:0], []
        live = slice(self._start, self._end)
        return self._buf[live], self._ids[live], self._tools[live]

    def of_session(self, session: str | None) -> NDArray[np.bool_]:
        """Which live rows ``session`` taught (all False for ``None`` or an unknown session)."""
        code = self._codes.get(session) if session is not None else None
        live = self._sessions[self._start : self._end]
        return live == code if code is not None else np.zeros(len(live), np.bool_)

    def by_session(self) -> list[list[list[str]]]:
        """The live rows' tools grouped by session, each session's in id order (rows learned
        without a session are left out)."""
        out: dict[int, list[list[str]]] = {}
        codes = self._sessions[self._start : self._end].tolist()
        for code, tools in zip(codes, self._tools[self._start : self._end], strict=True):
            if code >= 0:
                out.setdefault(code, []).append(tools)
        return list(out.values())

    def drop_below(self, oldest: int) -> None:
        """Forget rows whose id is below ``oldest`` (the store evicted them)."""
        ids = self._ids[self._start : self._end]
        dropped = int(np.searchsorted(ids, oldest))
        self._start += dropped
        self.version += dropped > 0

    def append(
        self,
        ids: Sequence[int],
        vectors: NDArray[np.float32],
        tools: Sequence[list[str]],
        sessions: Sequence[str] = (),
    ) -> None:
        """Add rows newer than every row held (``vectors`` is ``(n, dim)``)."""
        if not len(ids):
            return
        self._reserve(len(ids), int(vectors.shape[1]))
        assert self._buf is not None
        end = self._end + len(ids)
        self._buf[self._end : end] = vectors
        self._ids[self._end : end] = np.asarray(ids, np.int64)
        codes = [self._codes.setdefault(s, len(self._codes)) for s in sessions]
        self._sessions[self._end : end] = codes if codes else -1
        self._tools[self._end : end] = list(tools)
        self._end = end
        self.version += 1

    def _reserve(self, n: int, dim: int) -> None:
        """Room for ``n`` more rows: compact to the front, then double the capacity if needed."""
        if self._buf is not None and self._end + n <= len(self._buf):
            return
        live = self._end - self._start
        capacity = max(1024, len(self._ids))
        while capacity < 2 * (live + n):
            capacity *= 2
        buf = np.zeros((capacity, dim), np.float32)
        ids, sessions = np.zeros(capacity, np.int64), np.full(capacity, -1, np.int64)
        if self._buf is not None:
            buf[:live] = self._buf[self._start : self._end]
            ids[:live] = self._ids[self._start : self._end]
            sessions[:live] = self._sessions[self._start : self._end]
        self._tools = self._tools[self._start : self._end] + [[] for _ in range(capacity - live)]
        self._buf, self._ids, self._sessions = buf, ids, sessions
        self._start, self._end = 0, live
        if len(self._codes) > 2 * max(live, 1):
            self._recode()

    def _recode(self) -> None:
        """Forget the codes of sessions whose rows were all evicted (a long-lived process sees
        sessions without end); live rows get new, dense codes."""
        live = self._sessions[: self._end]
        kept = {int(c) for c in np.unique(live) if c >= 0}
        names = sorted((code, name) for name, code in self._codes.items() if code in kept)
        remap = np.full(len(self._codes) + 1, -1, np.int64)
        self._codes = {}
        for new, (old, name) in enumerate(names):
            remap[old], self._codes[name] = new, new
        self._sessions[: self._end] = np.where(live >= 0, remap[live], -1)
