"""Learning: what a finished turn teaches, and how selection reads it back.

:func:`lesson` builds a turn's lesson at ``turn-completed`` from the turn's own records (the allowed
tools it used, its latest user message, whose vector selection already computed); it rides on the
turn's :class:`Changes`, so it is stored in the turn's transaction. :class:`StoreSignals` answers
selection (co-use companions, votes of the nearest past requests) from the database, so a second
process sees what the first learned; only the past-request vectors stay in memory
(:class:`RequestMatrix`, refreshed incrementally, evicting by moving a start offset), because
copying that matrix every learned turn would cost more than the selection it serves. Any failure
answers ``{}``: a broken or locked database costs the hints, never the turn.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import filterfalse
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.config import Settings
from tooltray.memory.embedders.base import dot_rows
from tooltray.memory.learning.usage import Explained, Usage, usage_of
from tooltray.memory.store.base import BaseStore
from tooltray.memory.store.records import LearnedMate, LearnedSearch, Learning, PastRequest
from tooltray.memory.tuning import (
    COMPANION_MIN_SHARE,
    COMPANION_PRIOR,
    PAST_MIN_SIMILARITY,
    PAST_NEAREST,
)

if TYPE_CHECKING:
    from tooltray.memory.retrieval.selector import SelectionSignals

Used = dict[int, tuple[int, frozenset[str]]]
"""Per session code: its newest live row id and the tools that count."""
Found = dict[int, tuple[frozenset[str], frozenset[str]]]
"""Per session code: the tools its requests found, and of those, the ones it used."""


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

    def sessions_used(
        self, counted: Sequence[Collection[str]] | None = None
    ) -> dict[int, tuple[int, frozenset[str]]]:
        """Per session code: its newest live row id and every tool its rows used (or, given
        per live row, the tools that count)."""
        last: dict[int, int] = {}
        used: dict[int, set[str]] = {}
        live = slice(self._start, self._end)
        codes, ids = self._sessions[live].tolist(), self._ids[live].tolist()
        for code, row, tools in zip(codes, ids, counted or self._tools[live], strict=True):
            if code >= 0:
                last[code] = row
                used.setdefault(code, set()).update(tools)
        return {code: (last[code], frozenset(tools)) for code, tools in used.items()}

    def code_of(self, session: str | None) -> int | None:
        """The small integer code of ``session``'s rows (``None``: no rows of it)."""
        return self._codes.get(session) if session is not None else None

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


log = logging.getLogger("tooltray")
Allowed = Callable[[str], bool]


class StoreSignals:
    """What the store learned, filtered by the allow-list at read time (a denied tool never shows).

    Args:
        store: the store (reads only, through its protocol: any store that learns).
        allowed: the registry's allow check, asked on every answer (the list may change).
        half_life: learned turns after which a past request's vote counts half.
    """

    def __init__(self, store: BaseStore, allowed: Allowed, half_life: float) -> None:
        self.store = store
        self.allowed = allowed
        self.half_life = half_life
        self._rows = RequestMatrix()
        self._searched = RequestMatrix()  # past load_tools searches (no co-use, no usage)
        self._searched_newest = 0
        self._lock = threading.Lock()
        self._last: tuple[Any, NDArray[np.float32]] | None = None
        self._needs: tuple[int, _Needs] | None = None  # (rows version, what they spread)
        self._newest: int | None = None  # the newest id stored at the last read
        self._used: tuple[int, Explained | None, tuple[Used, Found]] | None = None
        self._missed: tuple[Explained, dict[int, frozenset[str]]] | None = None  # rows' finds

    def companions(self, tools: Sequence[str]) -> dict[str, float]:
        """Learned companions of ``tools``: max over the given tools of P(mate | tool), shrunk."""
        asked = sorted(set(tools))
        if not asked:
            return {}
        try:
            rows, clock = self.store.learned_mates(asked, COMPANION_MIN_SHARE)
        except Exception as exc:  # noqa: BLE001 - hints must never cost the turn
            log.debug("tooltray: learned companions unavailable: %s", exc)
            return {}
        prior = COMPANION_PRIOR * 2.0 ** ((clock.newest - clock.epoch) / self.half_life)
        return self._strengths(rows, set(asked), prior)

    def _strengths(
        self, rows: list[LearnedMate], asked: set[str], prior: float
    ) -> dict[str, float]:
        out: dict[str, float] = {}
        for row in rows:
            if row.mate not in asked and self.allowed(row.mate):
                strength = min(1.0, row.weight / (row.own + prior))
                out[row.mate] = max(out.get(row.mate, 0.0), strength)
        return out

    def past_requests(
        self,
        vectors: NDArray[np.float32],
        weights: Sequence[float] | None = None,
        session: str | None = None,
        fresh: bool = True,
    ) -> dict[str, float]:
        """Votes of the nearest past turns: similarity-weighted share of them that used a tool.

        A past turn is asked when it is at least :data:`PAST_MIN_SIMILARITY` close to one of the
        messages; that message's weight (default: the latest 1, each earlier one half) then
        scales its vote, so an earlier request still finds its past turns at full similarity.
        Turns ``session`` taught never vote. Without ``fresh`` the rows last read answer (read
        once if none were).
        """
        query = np.asarray(vectors, np.float32)
        if query.ndim != 2 or not len(query):
            return {}
        try:
            newest = self.refresh() if fresh or self._newest is None else self._newest
        except Exception as exc:  # noqa: BLE001 - hints must never cost the turn
            log.debug("tooltray: past requests unavailable: %s", exc)
            return {}
        with self._lock:
            matrix, ids, tools = self._rows.view()
            version, own = self._rows.version, self._rows.of_session(session)
        if matrix is None or matrix.shape[1] != query.shape[1]:
            return {}
        sims = self._similarities(matrix, query, version)
        scaled = np.where(sims >= PAST_MIN_SIMILARITY, sims * _weights(len(query), weights), 0.0)
        return self._votes(np.where(own, 0.0, scaled.max(axis=1)), ids, tools, newest)

    def past_searches(
        self, vector: NDArray[np.float32], session: str | None = None
    ) -> dict[str, float]:
        """Votes of the nearest past ``load_tools`` searches to the query ``vector`` (``(d,)``,
        L2-normalised): what searches like it led to, as :meth:`past_requests` weighs past
        requests (:data:`PAST_MIN_SIMILARITY`, the nearest, decay in learned searches).

        Read from what the last refresh loaded (a prepare's; read once if none was): a search
        begins no transaction of its own. Searches ``session`` taught never vote.
        """
        try:
            if self._newest is None:
                self.refresh()
        except Exception as exc:  # noqa: BLE001 - hints must never cost the turn
            log.debug("tooltray: past searches unavailable: %s", exc)
            return {}
        with self._lock:
            matrix, ids, tools = self._searched.view()
            own, newest = self._searched.of_session(session), self._searched_newest
        if matrix is None or matrix.shape[1] != len(vector):
            return {}
        sims = dot_rows(matrix, np.asarray(vector, np.float32)[None, :])[0]
        best = np.where((sims >= PAST_MIN_SIMILARITY) & ~own, sims, 0.0)
        return self._votes(best, ids, tools, newest)

    def _similarities(
        self, matrix: NDArray[np.float32], query: NDArray[np.float32], version: int
    ) -> NDArray[np.float32]:
        """``matrix @ query.T``, reused when the same messages are asked again (growth asks the
        conversation's votes, then the new messages' alone) and no row changed in between."""
        key = (version, query.shape, query.tobytes())
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        sims: NDArray[np.float32] = dot_rows(matrix, query).T
        self._last = (key, sims)
        return sims

    def _votes(
        self, best: NDArray[np.float32], ids: Any, tools: list[list[str]], newest: int
    ) -> dict[str, float]:
        k = min(PAST_NEAREST, len(best))
        near = np.argpartition(-best, k - 1)[:k]
        near = near[best[near] > 0]
        if not len(near):
            return {}
        decay = np.exp2(-(newest - ids[near]) / self.half_life)
        total = float(decay.sum())
        out: dict[str, float] = {}
        for row, weight in zip(near.tolist(), (best[near] * decay).tolist(), strict=True):
            for name in tools[row]:
                out[name] = out.get(name, 0.0) + weight / total
        return {n: min(1.0, v) for n, v in out.items() if self.allowed(n)}

    def session_needs(self, growth_miss: float) -> tuple[float, int]:
        """Past sessions' mean first-turn tools plus ``growth_miss`` of their later new ones
        (both means recomputed only when the rows changed, so a boundary asking for two shares,
        its needs and their first turns, walks the sessions once); ``(0.0, 0)`` when nothing
        can be read."""
        try:
            self.refresh()
        except Exception as exc:  # noqa: BLE001 - hints must never cost the turn
            log.debug("tooltray: past sessions unavailable: %s", exc)
            return 0.0, 0
        with self._lock:
            version = self._rows.version
            if self._needs is None or self._needs[0] != version:
                self._needs = (version, _needs(self._rows.by_session()))
            needs = self._needs[1]
            return needs.first + growth_miss * needs.later, needs.sessions

    def usage(
        self, session: str | None = None, explained: Explained | None = None, fresh: bool = True
    ) -> Usage:
        """Which tools past sessions (but ``session``) used, decayed like the votes; given
        ``explained``, only the uses their request missed. Empty when nothing can be read.
        Without ``fresh`` the rows last read answer (read once if none were): a search's."""
        try:
            newest = self.refresh() if fresh or self._newest is None else self._newest
        except Exception as exc:  # noqa: BLE001 - hints must never cost the turn
            log.debug("tooltray: past sessions unavailable: %s", exc)
            return Usage()
        with self._lock:
            version, last = self._rows.version, self._used
            if last is None or last[0] != version or last[1] is not explained:
                self._used = last = (version, explained, self._sessions_used(explained))
            (used, found), own = last[2], self._rows.code_of(session)
        rows = [row for code, row in used.items() if code != own]
        none = (frozenset[str](), frozenset[str]())
        finds = [found.get(code, none) for code in used if code != own] if found else []
        return usage_of(rows, newest, self.half_life, finds)

    def _sessions_used(self, explained: Explained | None) -> tuple[Used, Found]:
        """Per session code, its newest row and the tools that count (every use, or given
        ``explained``, the misses), and ``(found, hits)`` of its requests (given ``explained``)."""
        if explained is None:
            return self._rows.sessions_used(), {}
        tops = self._found(explained)
        if not tops:
            return {}, {}
        _, _, tools = self._rows.view()
        pairs = list(zip(tops, tools, strict=True))
        misses = [frozenset(t for t in used if t not in top) for top, used in pairs]
        hits = [frozenset(t for t in used if t in top) for top, used in pairs]
        found, hit = self._rows.sessions_used(tops), self._rows.sessions_used(hits)
        both = {code: (found[code][1], hit[code][1]) for code in found}
        return self._rows.sessions_used(misses), both

    def _found(self, explained: Explained) -> list[frozenset[str]]:
        """Per live row, the tools its request found (:meth:`Explained.found`): computed once
        per row (a refresh adds rows at the end), forgotten with the row."""
        matrix, ids, _ = self._rows.view()
        if matrix is None:
            return []
        known = self._missed[1] if self._missed and self._missed[0] is explained else {}
        order = ids.tolist()
        fresh = [i for i, row in enumerate(order) if row not in known]
        if fresh:
            found = explained.found(matrix[fresh])
            known.update(zip((order[i] for i in fresh), found, strict=True))
        if len(known) > 2 * len(order):
            known = {row: known[row] for row in order}
        self._missed = (explained, known)
        return [known[row] for row in order]

    def refresh(self) -> int:
        """Load rows learned since the last call (any process); return the newest id stored."""
        clock, fresh = self.store.past_requests(self._rows.last_id())
        searched, found = self.store.past_searches(self._searched.last_id())
        with self._lock:
            self._rows.drop_below(clock.oldest)
            self._searched.drop_below(searched.oldest)
            _append(self._rows, fresh)
            _append(self._searched, found)
            self._newest, self._searched_newest = clock.newest, searched.newest
        return clock.newest


def _append(matrix: RequestMatrix, rows: list[PastRequest]) -> None:
    """Add the rows read since the last refresh to ``matrix`` (those of its embedder)."""
    if not rows:  # nothing learned since the last read (a turn reads twice)
        return
    dim = matrix.dim or rows[-1].dim
    rows = [r for r in rows if r.vector is not None and r.dim == dim]  # one embedder's rows
    if rows:
        block = np.stack([np.frombuffer(bytes(r.vector or b""), np.float32) for r in rows])
        tools = [list(r.tools) for r in rows]
        sessions = [r.session_id for r in rows]
        matrix.append([r.id for r in rows], block, tools, sessions)


@dataclass(frozen=True)
class _Needs:
    """What past sessions spread: mean first-turn tools, mean later new ones, how many."""

    first: float
    later: float
    sessions: int


def _needs(sessions: Sequence[list[list[str]]]) -> _Needs:
    """Both means over sessions (their rows in id order)."""
    if not sessions:
        return _Needs(0.0, 0.0, 0)
    first_total, later_total = 0, 0
    for rows in sessions:
        first = set(rows[0])
        first_total += len(first)
        later_total += len({t for row in rows[1:] for t in row} - first)
    n = len(sessions)
    return _Needs(first_total / n, later_total / n, n)


def _weights(n: int, given: Sequence[float] | None) -> NDArray[np.float32]:
    """Per message (latest last): ``given``, or the latest at 1 and each earlier one at half."""
    if given is not None and len(given) == n:
        return np.asarray(given, np.float32)
    return (0.5 ** np.arange(n - 1, -1, -1)).astype(np.float32)


Embedded = tuple[str, NDArray[np.float32]]
"""A user message's ``(embedder id, L2-normalised vector)``."""


Searched = Sequence[tuple[str, Embedded, tuple[str, ...]]]
"""A turn's searches: each query, its vector and the used tools that came after it."""


def led_to(
    searches: Sequence[tuple[str, frozenset[str]]],
    used: Sequence[str],
    vector_of: Callable[[str], Embedded | None],
) -> Searched:
    """Each search of a turn (its query and the tools known when it was asked) with the used
    tools that came after it: unknown when it was asked, known by the next search (or the
    turn's end). A search whose query gets no vector, or that led to no tool, teaches nothing.

    "Search A, call A, search B, call B" gives A to the first search and B to the second; a
    model that searches twice and then calls both gives each search the tools its own answer
    (or the escapes after it) loaded."""
    out: list[tuple[str, Embedded, tuple[str, ...]]] = []
    ends = [*map(itemgetter(1), searches[1:]), None]  # no comprehension: one code object
    for (query, known), end in zip(searches, ends[: len(searches)], strict=True):
        after = tuple(filterfalse(known.__contains__, dict.fromkeys(used)))
        after = after if end is None else tuple(filter(end.__contains__, after))
        vector = vector_of(query) if after else None
        if vector is not None:
            out.append((query, vector, after))
    return out


def lesson(
    settings: Settings,
    turn: int,
    tools: Sequence[str],
    text: str | None,
    found: Embedded | None,
    searched: Searched = (),
) -> Learning | None:
    """The :class:`Learning` of one turn; ``None`` when learning is off or no tool was used.
    ``text`` is the turn's request and ``found`` its vector (``None``: co-use only);
    ``searched`` what its searches led to (:func:`led_to`)."""
    used = tuple(dict.fromkeys(tools))
    if settings.learn == "off" or not used:
        return None
    keep = settings.learn_keep_text
    searches = []
    for query, (embedder, vector), after in searched:
        bytes_ = np.asarray(vector, np.float32).tobytes()
        searches.append(LearnedSearch(after, bytes_, embedder, query if keep else None))
    return Learning(
        turn=turn,
        tools=used,
        vector=np.asarray(found[1], np.float32).tobytes() if found else None,
        embedder_id=found[0] if found else None,
        text=text if keep else None,
        half_life=settings.learn_half_life,
        max_requests=settings.learn_max_requests,
        max_pairs=settings.learn_max_pairs,
        searches=tuple(searches),
    )


def learned_signals(
    store: BaseStore, allowed: Callable[[str], bool], settings: Settings
) -> SelectionSignals:
    """The store's learned signals (any store learns), or :class:`NoSignals` (learning off)."""
    from tooltray.memory.retrieval.selector import NoSignals

    if settings.learn == "off":
        return NoSignals()
    return StoreSignals(store, allowed, settings.learn_half_life)
