"""The :class:`Selector` protocol, its default (:class:`IndexSelector`), and what selection may
learn from past sessions (:class:`SelectionSignals`; :class:`NoSignals` is a cold start).

One query rule fails one corpus or another (a new task in every message, or the task in an earlier
message and follow-ups after it), so every user message is scored apart on its catalog z-scale and
a tool's conversation score is the best of its weighted message scores: the current message at 1,
an earlier one decayed per *task* message after it; a follow-up is told by how weakly it matches
anything and does not age the context. A boundary loads the pick rule's choice over that score;
a later turn appends the strongest tools the new messages support, a new task judged on its own
scores, and learned past-request votes as a third calibrated retriever.

Every answer raises :class:`EmbedderError` while the embedder is down, because the trinket must
know (it exposes every tool and records the outage); ``lexical`` answers ``load_tools`` meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import filterfalse
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.config import Settings
from tooltray.memory.embedders import (
    CachedEmbedder,
    Embedder,
    OpenAIEmbedder,
    Progress,
    default_embedder,
    normalise,
)
from tooltray.memory.embedders.filecache import shared
from tooltray.memory.learning.usage import Explained, Usage
from tooltray.memory.retrieval import Hit, ToolIndex, doc_text
from tooltray.memory.retrieval.asks import Ask, Asks
from tooltray.memory.retrieval.index import Bundles, choose, mates
from tooltray.memory.retrieval.places import Twins
from tooltray.memory.retrieval.scoring import Candidate, Scored, terms, zscores
from tooltray.memory.store.records import Source
from tooltray.memory.tuning import (
    COMPANION_FROM,
    COMPANION_MIN,
    DECAY,
    EVIDENCE_SHARE,
    FOLLOW_UP_RATIO,
    FOLLOW_UP_TOP,
    FRESH_BAR,
    FRESH_GATE,
    FRESH_MATE_FLOOR,
    FRESH_MATES,
    FRESH_RATIO,
    FRESH_SHARE,
    GROW_BAR,
    GROW_K,
    GROW_RATIO,
    GROW_SUPPORT,
    KIND_SHARE,
    LOADED_K,
    MAX_MESSAGES,
    MENTION_K,
    NOW_OWN_MIN,
    NOW_VOTE_MIN,
    OWN_WORDS,
    PAST_WEIGHT,
    PURPOSE_SHARE,
    SEARCH_CONTEXT,
    SEARCH_K,
    SERVER_K,
    SPREAD_K,
    TASK_FLOOR,
    TASK_RATIO,
    TIE_K,
    TIE_SHARE,
    VOTE_MIN,
)
from tooltray.tools.errors import EmbedderError, TooltrayError
from tooltray.tools.spec import ToolSpec

if TYPE_CHECKING:
    from tooltray.memory.embedders.base import EmbeddingCache
    from tooltray.memory.retrieval.skills import Skill, SkillLibrary


class SelectionSignals(Protocol):
    """What the store learned from past sessions; every method is cheap and never raises."""

    def companions(self, tools: Sequence[str]) -> dict[str, float]:
        """Tools learned to be used with ``tools`` (same or next turn): name -> strength 0..1."""
        ...

    def past_requests(
        self,
        vectors: NDArray[np.float32],
        weights: Sequence[float] | None = None,
        session: str | None = None,
        fresh: bool = True,
    ) -> dict[str, float]:
        """Votes in [0, 1] from the past turns nearest to ``vectors``.

        Args:
            vectors: ``(n, d)`` float32 L2-normalised query embeddings of the conversation's user
                messages, latest last.
            weights: how much each message counts (the conversation's decay; default: the
                latest 1, each earlier one half).
            session: the asking session: its own past turns do not vote.
            fresh: read what other processes learned first; ``False`` within a turn whose
                prepare already read it (a ``load_tools`` search: no transaction of its own).
        """
        ...

    def past_searches(
        self, vector: NDArray[np.float32], session: str | None = None
    ) -> dict[str, float]:
        """Votes in [0, 1] from the past ``load_tools`` searches nearest to the query
        ``vector`` (``(d,)``, L2-normalised): the tools their turns then used. ``session``'s own
        searches do not vote; read from what the turn's prepare read (no transaction)."""
        ...

    def session_needs(self, growth_miss: float) -> tuple[float, int]:
        """The mean over past sessions of their first turn's tools plus ``growth_miss`` of the
        tools their later turns added, and how many sessions that mean is over (0: none)."""
        ...

    def usage(
        self, session: str | None = None, explained: Explained | None = None, fresh: bool = True
    ) -> Usage:
        """Which tools past sessions (but ``session``) used, whatever they said (given
        ``explained``, only where their request missed them): the usage priors' counts
        (:mod:`~tooltray.memory.learning.usage`). ``fresh`` as :meth:`past_requests` says."""
        ...


class NoSignals:
    """No history: nothing learned, so selection rests on the conversation alone."""

    def companions(self, tools: Sequence[str]) -> dict[str, float]:
        """Always empty."""
        return {}

    def past_requests(
        self,
        vectors: NDArray[np.float32],
        weights: Sequence[float] | None = None,
        session: str | None = None,
        fresh: bool = True,
    ) -> dict[str, float]:
        """Always empty."""
        return {}

    def past_searches(
        self, vector: NDArray[np.float32], session: str | None = None
    ) -> dict[str, float]:
        """Always empty."""
        return {}

    def session_needs(self, growth_miss: float) -> tuple[float, int]:
        """No past session: a mean over none."""
        return 0.0, 0

    def usage(
        self, session: str | None = None, explained: Explained | None = None, fresh: bool = True
    ) -> Usage:
        """No past session."""
        return Usage()


@dataclass(frozen=True)
class SessionSignals:
    """``inner`` as one session asks it during one selection: the session's own past turns
    never vote, and a question asked twice (a later turn's growth, then the picks it may
    reveal, ask the conversation's votes) is read from the store once.

    Its earlier requests led to tools that are loaded already; as the nearest rows to its next
    message they would crowd out the other sessions' turns that know the new task's tool
    (bfcl_multiturn: "submit a formal complaint about the cancellation" found its own "cancel
    the booking" turns before the past sessions that filed tickets).
    """

    inner: SelectionSignals
    session: str
    answers: dict[tuple[Any, ...], dict[str, float]] = field(
        default_factory=dict, compare=False, repr=False
    )
    used: list[Usage] = field(default_factory=list, compare=False, repr=False)

    def companions(self, tools: Sequence[str]) -> dict[str, float]:
        """The inner companions (co-use counts carry no session)."""
        return self.inner.companions(tools)

    def past_requests(
        self,
        vectors: NDArray[np.float32],
        weights: Sequence[float] | None = None,
        session: str | None = None,
        fresh: bool = True,
    ) -> dict[str, float]:
        """The inner votes of every other session (once per question)."""
        asked = (
            vectors.shape,
            vectors.tobytes(),
            None if weights is None else tuple(weights),
            session,
        )
        if asked not in self.answers:
            inner = self.inner.past_requests(vectors, weights, session or self.session, fresh)
            self.answers[asked] = inner
        return self.answers[asked]

    def past_searches(
        self, vector: NDArray[np.float32], session: str | None = None
    ) -> dict[str, float]:
        """The inner votes of every other session's searches."""
        return self.inner.past_searches(vector, session or self.session)

    def session_needs(self, growth_miss: float) -> tuple[float, int]:
        """The inner sessions' needs (a session's own turns are a small share of them)."""
        return self.inner.session_needs(growth_miss)

    def usage(
        self, session: str | None = None, explained: Explained | None = None, fresh: bool = True
    ) -> Usage:
        """The other sessions' use (read once per selection)."""
        if not self.used:
            self.used.append(self.inner.usage(session or self.session, explained, fresh))
        return self.used[0]


class Selector(Protocol):
    """Stages 1-3 of selection: score the conversation's tools and decide. Every method is
    required (:class:`SelectorBase` gives the plain answers); each raises ``EmbedderError``
    while the embedder is down, except :meth:`lexical`, the answer meanwhile."""

    embedder: Embedder | None
    """What recalls skills (``None``: a selector without one recalls none)."""

    def boundary(self, users: Sequence[str], signals: SelectionSignals) -> list[Candidate]:
        """What a session boundary loads, best first, from the user messages (oldest first)."""
        ...

    def growth(
        self,
        users: Sequence[str],
        signals: SelectionSignals,
        loaded: Sequence[str],
        fresh: int = 1,
    ) -> list[Candidate]:
        """What a later turn appends (none of ``loaded``); ``fresh`` messages are new."""
        ...

    def search(self, query: str, exclude: Collection[str] = ()) -> list[Candidate]:
        """A ``load_tools`` answer: the query's matches, none of ``exclude``."""
        ...

    def lexical(self, query: str, exclude: Collection[str] = ()) -> list[Candidate]:
        """A ``load_tools`` answer that needs no embedder (while it is down)."""
        ...

    def voted_search(
        self,
        query: str,
        found: Sequence[Candidate],
        votes: Mapping[str, float],
        exclude: Collection[str] = (),
    ) -> list[Candidate]:
        """``found`` (the answer to ``query``) with the deployment's learned ``votes``: the
        tools past sessions with a request like it went on to use (:func:`with_votes`)."""
        ...

    def tasks(self, users: Sequence[str]) -> int:
        """How many tasks the conversation's latest message states (a session's needs)."""
        ...

    def request_of(self, texts: Sequence[str]) -> str:
        """Which message of a turn asked for what it used (what learning stores)."""
        ...

    def vector_of(self, text: str) -> tuple[str, Any] | None:
        """``(embedder id, query vector)`` of one message (``None``: no embedder)."""
        ...

    def recall_skills(self, library: SkillLibrary, goal: str) -> list[Skill]:
        """The skills whose goal matches ``goal``."""
        ...


class SelectorBase:
    """The plain answers of a :class:`Selector`'s secondary questions, for a selector of one's
    own: its search needs no embedder, the latest message states one task and asked for what
    the turn used, no vectors, no skills. Subclass it and write ``boundary``, ``growth`` and
    ``search``."""

    embedder: Embedder | None = None

    def search(self, query: str, exclude: Collection[str] = ()) -> list[Candidate]:
        """Nothing (a subclass answers)."""
        return []

    def lexical(self, query: str, exclude: Collection[str] = ()) -> list[Candidate]:
        """:meth:`search` itself."""
        return self.search(query, exclude)

    def voted_search(
        self,
        query: str,
        found: Sequence[Candidate],
        votes: Mapping[str, float],
        exclude: Collection[str] = (),
    ) -> list[Candidate]:
        """Strong votes beside the matches (:func:`with_votes`)."""
        return with_votes(found, votes, exclude)

    def tasks(self, users: Sequence[str]) -> int:
        """One task."""
        return 1

    def request_of(self, texts: Sequence[str]) -> str:
        """The latest message."""
        return texts[-1]

    def vector_of(self, text: str) -> tuple[str, Any] | None:
        """No vector: only co-use is learned."""
        return None

    def recall_skills(self, library: SkillLibrary, goal: str) -> list[Skill]:
        """No skills."""
        return []


Row = NDArray[np.float64]
Rows = NDArray[np.float64]
"""The final scores of the conversation's user messages, one row each, oldest first: stacked
once a selection and read by every rule below."""


@dataclass(frozen=True)
class MessageScores:
    """One user message's final (bundle-lifted) scores and its best score."""

    final: Row

    @property
    def top(self) -> float:
        """The best score: how strongly the message matches anything."""
        finite = self.final[np.isfinite(self.final)]
        return float(finite.max()) if finite.size else 0.0


@dataclass(frozen=True)
class Reading:
    """What a ``load_tools`` query takes from its turn (:meth:`IndexSelector.search`).

    ``row``: scores joining the query's (the turn's request, a purpose, a server kind).
    ``own``: the query is in the model's own words (or asked with no turn): it names a job,
    and across servers its look-alikes are alternatives the model cannot tell apart.
    ``floor``: the request joined at under its whole share, so with the query's best match
    loaded, a fresh tool under half that match's score is noise, not an answer.
    """

    row: Row | None = None
    own: bool = False
    floor: bool = False


def companions(
    learned: Mapping[str, float], top: float, keep: Callable[[str], bool]
) -> list[Candidate]:
    """Learned co-use mates of at least :data:`COMPANION_MIN` strength that ``keep`` accepts,
    strongest first, scored as that share of ``top`` (the picks they accompany)."""
    ranked = sorted(learned.items(), key=lambda kv: -kv[1])
    return [Candidate(n, "semantic", v * top) for n, v in ranked if v >= COMPANION_MIN and keep(n)]


def said(users: Sequence[str]) -> list[str]:
    """The user messages that say something (a blank one asks for nothing), oldest first."""
    return [*filter(str.strip, filter(None, users))]  # no comprehension: one code object


def tasks(rows: Rows) -> list[bool]:
    """Per message: does it state a task (match something strongly), or follow one up?"""
    finite = np.isfinite(rows)  # each message's best finite score (MessageScores.top)
    tops = np.where(finite.any(axis=1), np.where(finite, rows, -np.inf).max(axis=1), 0.0)
    best = float(tops.max()) if len(tops) else 0.0
    flags: list[bool] = (tops >= max(FOLLOW_UP_TOP, FOLLOW_UP_RATIO * best)).tolist()
    return flags


def weights(rows: Rows) -> list[float]:
    """Per message (oldest first): ``DECAY`` to the number of task messages after it."""
    out, tasks_after = [], 0
    for task in reversed(tasks(rows)):
        out.append(DECAY**tasks_after)
        tasks_after += task
    return out[::-1]


def combine(rows: Rows, votes: Row | None = None) -> Row:
    """The conversation score: the best weighted message score per tool (+ past votes)."""
    w = np.asarray(weights(rows))[:, None]
    weighted = np.where(rows > 0, rows * w, rows)
    out: Row = weighted.max(axis=0)
    if votes is not None and np.any(votes > 0):
        out = out + PAST_WEIGHT * zscores(votes)
    return out


def task_count(sentences: NDArray[np.float64], final: Row) -> int:
    """How many tasks a message states: the distinct best tools of its sentences (of the whole
    conversation score for a one-sentence message) that clear ``TASK_RATIO`` x its top and
    ``TASK_FLOOR``; at least one.

    Each task is a tool the first turn uses, and unlike the picks' summed chances (calibrated
    on catalogs of 18-130 tools) the count does not grow with the catalog: on the six dev
    corpora it reads a first turn's tools within 0.25 (``memory/tuning.py``).
    """
    rows = sentences if len(sentences) else final[None, :]
    line = max(TASK_FLOOR, TASK_RATIO * MessageScores(final).top)
    best = {int(np.argmax(row)) for row in rows if float(np.max(row)) >= line}
    return max(len(best), 1)


def earlier_tasks(rows: Rows) -> Rows:
    """The score rows of the task messages before the current one (oldest first).

    A request followed by a message that strongly matches other tools ("My username is X and my
    password is Y" matches every account tool) is aged by it in :func:`combine` and can fall under
    the conversation bar; its own best tools must still load (``sentence_best`` over these rows).
    """
    earlier: Rows = rows[:-1][np.asarray(tasks(rows)[:-1], bool)]
    return earlier


def evidence(rows: Rows) -> Row:
    """Weighted sum of positive message scores: what several weak mentions add up to."""
    w = np.asarray(weights(rows))[:, None]
    return np.asarray((np.maximum(rows, 0.0) * w).sum(axis=0) * EVIDENCE_SHARE, np.float64)


def vote_row(votes: Mapping[str, float], position: Mapping[str, int], n: int) -> Row | None:
    """Past-request votes as a catalog row (``None`` without any vote for a known tool)."""
    row = np.zeros(n)
    for name, vote in votes.items():
        if name in position:
            row[position[name]] = float(vote)
    return row if np.any(row > 0) else None


def voted(votes: Row | None, skip: Collection[int] = ()) -> list[int]:
    """Tools most of the nearest past requests led to (vote >= ``VOTE_MIN``), best first, none
    of ``skip``.

    They are picked beside the conversation's own picks rather than through its score: a
    strong vote added to the score raises the top, and with it the relative bar, so the
    message's other good matches would drop out.
    """
    if votes is None:
        return []
    order = np.argsort(-votes, kind="stable")
    return [int(i) for i in order if votes[i] >= VOTE_MIN and i not in skip]


def with_votes(
    found: Sequence[Candidate], votes: Mapping[str, float], exclude: Collection[str] = ()
) -> list[Candidate]:
    """A ``load_tools`` answer with, beside its matches, the tools most of the nearest past
    requests led to (vote >= ``VOTE_MIN``, none of ``found`` or ``exclude``, strongest first):
    at most half as many as the answer has, so a query's own matches stay the larger part.

    As at a boundary (:func:`voted`), votes join beside the query's matches rather than through
    their score: a vote is a third retriever on another scale, and a sparse vote row's z-scores
    would outrank every match. A model's query often states the request's topic, not the tool's
    job, and what sessions with such a request went on to use is known. They take no match's
    place: past sessions used many tools, and in their places they crowded out the match the
    model asked for (``bench/README.md``, "searches with history", which prices the larger
    answer). The answer's mentions (bundles named, not loaded) stay last.
    """
    matches = [*filterfalse(attrgetter("mention"), found)]
    have = {c.name for c in matches}
    fresh = sorted(
        (-vote, name)
        for name, vote in votes.items()
        if vote >= VOTE_MIN and name not in have and name not in exclude
    )[: len(matches) // 2]
    top = max((c.score or 0.0 for c in matches), default=0.0)
    voted = (Candidate(name, "semantic", -neg * top) for neg, name in fresh)
    return [*matches, *voted, *filter(attrgetter("mention"), found)]


def growth(score: Row, extra: Row, loaded: Sequence[int], current: Row | None = None) -> list[int]:
    """Tools a later turn may append: strong on the conversation score, not loaded, at most 3.

    The current message must lend a tool some support (``GROW_SUPPORT``): a bare "next" never
    re-adds what an earlier request matched but the initial selection left out.
    """
    grow = np.maximum(score, extra)
    if current is not None:
        grow = np.where(current >= GROW_SUPPORT, grow, -np.inf)
    top = float(np.max(grow[np.isfinite(grow)])) if np.isfinite(grow).any() else 0.0
    line = max(GROW_BAR, GROW_RATIO * top)
    have = np.asarray(sorted(set(loaded)), np.int64)
    order = np.argsort(-grow, kind="stable")[: GROW_K + len(have)]
    kept: list[int] = order[(grow[order] >= line) & ~np.isin(order, have)][:GROW_K].tolist()
    return kept


def new_task(own: Row, backed: Row, loaded: Sequence[int], skip: Sequence[int] = ()) -> list[int]:
    """Tools of a task the current message starts, judged on its own scores, at most 3, then
    none of ``skip`` (tools a turn's growth took already).

    Growth over the conversation score misses a new task: after "fill the tank" (6.9), "now get
    the engine running" scores startEngine 3.9, under the conversation bar (0.8 x the top). When
    one of the message's own best ``FRESH_GATE`` tools is not loaded, the message asks for
    something new: its supported tools not loaded join when they clear ``FRESH_BAR``,
    ``FRESH_RATIO`` of the best of them and ``FRESH_SHARE`` of the message's best (a distant
    runner-up of a loaded tool is no new task).
    Their closest bundle-mates join too (:func:`fresh_mates`), in the same prefix change.
    """
    have = set(loaded)
    finite = np.isfinite(own)
    ranked = np.where(finite, own, -np.inf)
    best = np.argsort(-ranked, kind="stable")[:FRESH_GATE]
    ok = finite & (backed >= GROW_SUPPORT)
    ok[list(have)] = False
    if have.issuperset(best.tolist()) or not ok.any():
        return []
    top = float(own[ok].max())
    line = max(FRESH_BAR, FRESH_RATIO * top, FRESH_SHARE * float(ranked.max()))
    order = np.argsort(-np.where(ok, own, -np.inf), kind="stable")
    picked = order[ok[order] & (own[order] >= line)][:GROW_K]
    kept: list[int] = picked[~np.isin(picked, np.asarray(skip, np.int64))].tolist()
    return kept


def fresh_mates(
    picks: Sequence[int], own: Row, bundles: Bundles, loaded: Sequence[int]
) -> list[int]:
    """The ``FRESH_MATES`` bundle-mates of a new task's picks that the message backs best.

    A task worded loosely ("buzz Catherine", "dispatch a note to David") matches its bundle's
    tools more than the one it needs: delete_message leads and send_message sits at 1.2-2.3.
    Mates the message itself scores at ``FRESH_MATE_FLOOR`` or more come along; bfcl_multiturn
    later turns missing a tool 39 -> 32 of 319 in the growth replay, with no extra prefix change.
    """
    return bundles.close_mates(picks, own, FRESH_MATE_FLOOR, set(loaded))[:FRESH_MATES]


Part = tuple[MessageScores, Scored, Any]
"""One message's scores, its calibrated score rows and its whole-message vector (or ``None``)."""
_SOURCES: dict[str, Source] = {  # a bundle-mate loads as semantic, an exact select: as manual
    "semantic": "semantic",
    "lexical": "lexical",
    "bundle": "semantic",
    "select": "manual",
}
MEMO_SIZE = 64
CACHE_MAX = 512


class IndexSelector:
    """The default selector: a ``tooltray.memory.retrieval.ToolIndex`` and an embedder.

    The index stops using its document vectors after an embedder failure; this keeps them
    (``_docs``) and puts them back before the next query, which is what lets a session recover.
    """

    def __init__(self, index: ToolIndex, embedder: Embedder | None, settings: Settings) -> None:
        self.index = index
        self.embedder = embedder
        self.settings = settings
        self._docs: NDArray[np.float32] | None = index.doc_vectors
        self.memo: dict[str, Any] = {}
        self._messages: dict[str, Part] = {}
        #: the last conversation scored, with the signals of the selection that asked
        self._read: tuple[SelectionSignals, list[str], tuple[Any, ...]] | None = None
        of = dict(zip(index.names, index.bundles.of, strict=True))
        self._reader = Asks(index.names, of)  # names and bundles are fixed for the index's life
        self._twins = Twins(index.specs)  # its aliases (retrieval/places.py) too

    def _revive(self) -> bool:
        """Give the index its document vectors back; False for a lexical-only index."""
        self._docs = self._docs if self._docs is not None else self.index.vectors
        if self._docs is None and self.index.degraded is not None and self.embedder is not None:
            texts = [doc_text(s) for s in self.index.specs]
            self._docs = np.asarray(self.embedder.embed(texts, "document"), np.float32)
        if self.index.doc_vectors is None:
            self.index.doc_vectors = self._docs
        return self.index.doc_vectors is not None

    def _vector(self, text: str) -> NDArray[np.float32] | None:
        """The query's vectors (``None``: lexical-only index); raises if the embedder is down."""
        if not self._revive():
            return None
        try:
            vector = self.index.embed_query(text)
        except EmbedderError:
            self.index.doc_vectors = None
            raise
        if vector is None:
            raise EmbedderError(self.index.degraded or "the embedder failed")
        self.index.degraded = None
        self._remember(text, vector[0])
        return vector

    def _remember(self, text: str, vector: Any) -> None:
        """Keep the vectors of the last few messages: learning at turn end reuses them."""
        self.memo[text] = vector
        if len(self.memo) > MEMO_SIZE:
            del self.memo[next(iter(self.memo))]

    def _answer(
        self, query: str, exclude: Collection[str], vector: Any, reading: Reading
    ) -> list[Candidate]:
        """A ``load_tools`` answer, dense or lexical alike: none of ``exclude``, and with it no
        bundle-mates fill the places the bar leaves; a server's aliases share a place
        (:mod:`~tooltray.memory.retrieval.places`). Then, as mentions, the bundles of the next
        ``MENTION_K`` matches: where the needed tool's server is in neither the answer nor the
        menu, the model loads it from there instead of asking for every tool's directory.
        ``reading``'s row joins the matches' scores, not the mentions'."""
        scored = self.index.score(query, "hybrid", vector)  # once: every pick below reads it
        pick = partial(
            self.index.picks,
            query,
            exclude=exclude,
            context=reading.row,
            floor=reading.floor,
            scored=scored,
        )
        hits = pick(SEARCH_K, pull=not exclude, siblings=SEARCH_K)
        if reading.own:  # a job in the model's words
            hits = self._spread(
                partial(pick, pull=not exclude, siblings=SEARCH_K), query, len(hits)
            )
        if self._twins.of:  # a catalog without aliases (most) skips both steps
            doubles = self._twins.doubles([self.index.position[h.name] for h in hits])
            if doubles:
                hits = pick(SEARCH_K + doubles, pull=not exclude, siblings=SEARCH_K)
            hits = self._with_twins(hits, exclude)
        found = _candidates(hits + self._ties(pick, hits))
        skip = {*exclude, *map(attrgetter("name"), found)}
        more = self.index.beyond(query, MENTION_K, exclude=skip, scored=scored)
        return found + [*map(partial(Candidate, source="semantic", mention=True), more)]

    def _spread(self, pick: Callable[..., list[Hit]], query: str, places: int) -> list[Hit]:
        """The answer's ``places``: each server's best match first, then its other tools, best
        first within each. Across servers, look-alikes do one job (six servers' web fetchers),
        and one server's variants (``get_markdown``, ``get_markdown_summary``) took the places
        of the others' fetchers. A server the query names (``git diff``) keeps its places, and
        so do the bundle-mates a pick pulls in."""
        of, seen, named = self.index.bundles.of, set(), set(terms(query))
        first: list[Hit] = []
        rest: list[Hit] = []
        for hit in pick(SPREAD_K):  # a loop: the turn's trace counts functions
            bundle = of[self.index.position[hit.name]]
            fresh = bundle is None or bundle not in seen or named.issuperset(terms(bundle))
            seen.add(bundle)
            (first if fresh or hit.source == "bundle" else rest).append(hit)
        return (first + rest)[:places]

    def _with_twins(self, hits: list[Hit], exclude: Collection[str]) -> list[Hit]:
        """``hits`` with each one's aliases (not in ``exclude``) beside it."""
        names, skip = self.index.names, set(exclude)
        order = [self.index.position[h.name] for h in hits]
        kept = self._twins.places(order, len(order), lambda j: names[j] not in skip)
        by_name = {h.name: h for h in hits}
        twin_of = {j: i for i in order for j in self._twins.of.get(i, ())}
        return [by_name.get(names[i]) or replace(by_name[names[twin_of[i]]], name=names[i])
                for i in kept]  # fmt: skip

    def _ties(self, pick: Callable[..., list[Hit]], hits: list[Hit]) -> list[Hit]:
        """Up to ``TIE_K`` tools past a full answer's ``SEARCH_K`` places that score within
        ``TIE_SHARE`` of its best: near ties are a guess between look-alikes (``convert_speed``,
        ``convert_pressure``), and a wrong guess costs the model another search."""
        best = max(map(attrgetter("score"), hits), default=0.0)
        if len(hits) < SEARCH_K or best <= 0:
            return []
        more = pick(SEARCH_K + TIE_K, pull=False)
        have, bar = set(map(attrgetter("name"), hits)), TIE_SHARE * best
        return [h for h in more if h.name not in have and h.score >= bar][:TIE_K]

    def search(
        self,
        query: str,
        exclude: Collection[str] = (),
        *,
        dense: bool = True,
        context: Sequence[str] = (),
    ) -> list[Candidate]:
        """The best matches for a ``load_tools`` query, none of ``exclude`` (the loaded tools);
        by the lexical half alone without ``dense`` (see :meth:`lexical`).

        The model asks because what is loaded does not do the job: loaded tools would only
        take the answer's places. Bundle-mates do not fill the places the bar leaves: the
        answer is the query's own matches (a session near ``hard_max_tools`` keeps room for
        the bundle the model may ask for next).

        When the query's best match is already loaded, up to ``SEARCH_K`` of its bundle-mates
        come too, best first: the model asks although that tool is there, so it lacks a helper
        beside it (``startEngine`` loaded, ``pressBrakePedal`` missing). Both rules' figures are
        in ``bench/README.md`` ("Tuned values": load_tools answers). A query's shape
        (:mod:`~tooltray.memory.retrieval.asks`) can rank a server line's bundles alone, or put a
        guessed name's real tool first.

        Asked in a turn (``context``: its user messages), the turn's request's scores join
        the query's at ``SEARCH_CONTEXT`` times the share of the query's words the turn's
        messages hold: a query that repeats them (``aim eight papers total two``) is a fragment
        of the task, and the request says which of a server's look-alike tools the task needs;
        one in the model's own words (``fetch a web page by URL``) names a job, and each
        server's best tool for it takes a place before any server's second (:meth:`_spread`;
        bench/README.md, stop 54). The request's scores are the selection's, cached.
        """
        ask = self._reader.read(query)
        vector = self._vector(ask.text) if dense else None
        texts = said(context) if dense else []
        mine = set(terms(ask.text))  # not a function of its own: the turn's trace
        quoted = len(mine.intersection(terms(" ".join(texts)))) / len(mine) if mine else 1.0
        turn = self._message(self.request_of(texts))[1].fused if texts else None
        turn = None if turn is None else SEARCH_CONTEXT * quoted * turn
        if ask.purpose or ask.kind:  # most queries carry neither (trace)
            turn = self._joined(turn, ask.purpose, PURPOSE_SHARE, dense)
            turn = self._joined(turn, ask.kind, KIND_SHARE, dense, servers=True)
        reading = Reading(turn, not texts or quoted < OWN_WORDS, bool(texts) and quoted < 1)
        held = self._twins.beside(exclude) if exclude and self._twins.of else exclude
        fresh = self._fresh(ask, held, vector, reading)
        if not all(map(attrgetter("mention"), fresh)):  # a tool among them (no genexpr: trace)
            return fresh
        return self._loaded(ask, exclude, vector, reading) + fresh  # the bundles line stays

    def _joined(
        self, row: Row | None, text: str, share: float, dense: bool, *, servers: bool = False
    ) -> Row | None:
        """``row`` plus ``text``'s scores at ``share``; with ``servers`` each tool takes its
        server's best. A purpose (``run code to <purpose>``) tells look-alike runners apart, not
        which tool runs the order; a server line naming no bundle says what kind of server
        holds the tool, not which tool (:mod:`~tooltray.memory.retrieval.asks`)."""
        if not text:
            return row
        vector = self._vector(text) if dense else None
        part = self.index.score(text, query_vector=vector)[0].fused
        if servers:
            part = np.maximum(part, self.index.bundles.best_mate(part))
        return share * part if row is None else row + share * part

    def voted_search(
        self,
        query: str,
        found: Sequence[Candidate],
        votes: Mapping[str, float],
        exclude: Collection[str] = (),
    ) -> list[Candidate]:
        """Strong votes beside the matches (:func:`with_votes`); a query whose server line named
        its bundles takes votes for their tools only, as it takes matches (the model said where
        the tool is)."""
        ask = self._reader.read(query)
        if ask.bundles:
            mine = {self.index.names[i] for b in ask.bundles for i in self.index.bundles.members[b]}
            votes = {n: v for n, v in votes.items() if n in mine}
        return with_votes(found, votes, exclude)

    def lexical(self, query: str, exclude: Collection[str] = ()) -> list[Candidate]:
        """``search`` by the lexical half alone: the answer while the embedder is down.

        The index stays lexical until the next dense query tries the embedder again.
        """
        self.index.doc_vectors = None
        return self.search(query, exclude, dense=False)

    def _fresh(
        self, ask: Ask, exclude: Collection[str], vector: Any, reading: Reading
    ) -> list[Candidate]:
        """The answer among the tools not in ``exclude``."""
        within = self._within(ask, exclude, vector, reading.row) if ask.bundles else []
        if within:
            return within
        found = self._answer(ask.text, exclude, vector, reading)
        if not ask.named:  # no guessed name: the matches alone
            return found
        named = [Candidate(n, "manual", 99.0) for n in ask.named if n not in exclude]
        return named[:SEARCH_K] + [c for c in found if c.name not in ask.named]

    def _loaded(
        self, ask: Ask, exclude: Collection[str], vector: Any, reading: Reading
    ) -> list[Candidate]:
        """When no tool outside ``exclude`` matches (bundle mentions alone do not), the best
        ``LOADED_K`` matches in it: the model asked for tools it has (a catalog shown whole has
        every tool loaded), and ``load_tools`` answers that they are loaded, not that nothing
        matched."""
        if not exclude:
            return []
        found = self._fresh(ask, (), vector, reading)
        return [c for c in found if c.name in exclude and not c.mention][:LOADED_K]

    def _within(
        self, ask: Ask, exclude: Collection[str], vector: Any, context: Row | None = None
    ) -> list[Candidate]:
        """The best ``SERVER_K`` tools of the bundles a server line names, none of ``exclude``:
        the model said where the tool is, so no tool elsewhere takes a place. A named bundle
        with members left past those places is mentioned (the answer's bundles line): a model
        whose tool is not among them loads the rest by the bundle's name, not every tool's
        directory (bench/README.md, stop 48)."""
        fused = self.index.score(ask.text, query_vector=vector)[0].fused
        fused = fused if context is None else fused + context
        members = [i for b in ask.bundles for i in self.index.bundles.members.get(b, ())]
        skip = set(exclude)
        kept = [i for i in members if self.index.names[i] not in skip]
        ranked = sorted(kept, key=lambda i: -float(fused[i]))
        places = self._twins.places(ranked, SERVER_K, set(kept).__contains__)
        left = set(kept).difference(places)
        more = [b for b in ask.bundles if left.intersection(self.index.bundles.members.get(b, ()))]
        rest = [Candidate(b, "semantic", mention=True) for b in more] if places else []
        return self._scored(places, fused) + rest

    def recall_skills(self, library: SkillLibrary, goal: str) -> list[Skill]:
        """Skills matching ``goal``, with a bar set by the goal's cosines over the tool docs."""
        if not self._revive():
            return []
        return library.recall_skill(goal, np.asarray(self.index.doc_vectors))

    # ----- the conversation as a whole (see :mod:`tooltray.memory.retrieval.selector`) -----

    def _message(self, text: str) -> Part:
        """One user message's scores and whole-message vector (cached by text)."""
        known = self._messages.get(text)
        if known is not None and self.index.doc_vectors is not None and known[2] is not None:
            return known  # a message scored lexically is scored again once vectors join
        vectors = self._vector(text)
        scored, _ = self.index.score(text, "hybrid", vectors)
        whole = None if vectors is None else np.asarray(vectors, np.float32)[0]
        out = (MessageScores(self.index.bundles.lift(scored.fused)), scored, whole)
        if len(self._messages) >= CACHE_MAX:
            self._messages.clear()
        self._messages[text] = out
        return out

    def _conversation(self, users: Sequence[str], signals: SelectionSignals) -> tuple[Any, ...]:
        """The latest messages' scores (:data:`Rows`), the current message's scores and text, the
        learned past-request votes as a catalog row (``None`` without any), and the parts.

        One selection asks :meth:`growth`, then :meth:`boundary` (a priced reveal) of the same
        conversation with the same ``signals``: it is scored once for both."""
        texts = said(users)[-MAX_MESSAGES:]
        last = self._read
        if last is not None and last[0] is signals and last[1] == texts:
            return last[2]
        parts = [self._message(t) for t in texts]
        rows = np.vstack([p[0].final for p in parts])
        votes = self._votes(signals, parts, weights(rows))
        out = rows, parts[-1][1], texts[-1], votes, parts
        self._read = (signals, texts, out)
        return out

    def _votes(
        self, signals: SelectionSignals, parts: Sequence[Part], weights: Sequence[float]
    ) -> Row | None:
        """Past-request votes for the messages of ``parts`` at ``weights``, as a catalog row.

        The same messages give the same query matrix, so asking again with other weights
        reuses the similarities (:class:`~tooltray.memory.learning.StoreSignals`)."""
        have = [(p[2], w) for p, w in zip(parts, weights, strict=True) if p[2] is not None]
        if not have:
            return None
        vectors, kept = zip(*have, strict=True)
        learned = signals.past_requests(normalise(np.vstack(vectors)), list(kept))
        return vote_row(learned, self.index.position, len(self.index.names))

    def _companions(
        self, signals: SelectionSignals, names: list[str], top: float, have: set[str]
    ) -> list[Candidate]:
        learned = signals.companions(names) if names else {}
        known = self.index.position
        return companions(learned, top, lambda n: n in known and n not in have)

    def vector_of(self, text: str) -> tuple[str, NDArray[np.float32]] | None:
        """``(embedder id, query vector)`` of one user message, for learning at turn end.

        Selection embedded the message already when it selected or grew this turn, so this is
        usually the memo; otherwise it costs one query embedding. ``None`` without an embedder
        or while it is down: then only co-use is learned.
        """
        if self.embedder is None:
            return None
        if text in self.memo:
            return str(self.embedder.id), np.asarray(self.memo[text], np.float32)
        try:
            vector = self.embedder.embed([text], "query")
        except TooltrayError:
            return None
        return str(self.embedder.id), np.asarray(vector, np.float32)[0]

    def request_of(self, texts: Sequence[str]) -> str:
        """The first task message of ``texts`` (see ``AllowedCatalog.request``); the latest
        when none is one, or when the embedder is down."""
        recent = list(texts[-MAX_MESSAGES:])
        try:
            flags = tasks(np.vstack([self._message(text)[0].final for text in recent]))
        except EmbedderError:
            return recent[-1]
        return recent[flags.index(True)] if True in flags else recent[-1]

    def tasks(self, users: Sequence[str]) -> int:
        """How many tasks the latest user message states (:func:`task_count`; 0 without one);
        the boundary scored these messages already, so this reads cached scores."""
        texts = said(users)[-MAX_MESSAGES:]
        if not texts:
            return 0
        parts = [self._message(t) for t in texts]
        return task_count(parts[-1][1].sentences, combine(np.vstack([p[0].final for p in parts])))

    def boundary(self, users: Sequence[str], signals: SelectionSignals) -> list[Candidate]:
        """What to load at a session boundary from the whole conversation.

        The pick rule of :func:`~.picks.choose` over the conversation score (the current
        message's sentences and the earlier task messages each keep their best tools), then the
        learned past-request votes and companions of strong picks, then bundle-mates.
        """
        if not said(users):
            return []
        each, current, text, votes, _ = self._conversation(users, signals)
        final = combine(each)  # votes join below: raising the top would raise the bar
        k, idx = self.settings.max_tools, self.index
        rows = [current.sentences, earlier_tasks(each)]
        main, chosen = choose(final, rows, idx.ties, text, k)
        if not main or k < 1:
            return []
        top = float(final[main[0]])
        chosen += voted(votes, chosen)[: max(k - len(chosen), 0)]
        out = self._scored(chosen, final)
        strong = [idx.names[i] for i in chosen if final[i] >= COMPANION_FROM * top]
        have = set(map(attrgetter("name"), out))
        out += self._companions(signals, strong, top, have)[: k - len(out)]
        taken = set(map(attrgetter("name"), out))
        pulled = [i for i in mates(chosen, final, idx.bundles) if idx.names[i] not in taken]
        return out + self._scored(pulled, final)[: k - len(out)]

    def growth(
        self,
        users: Sequence[str],
        signals: SelectionSignals,
        loaded: Sequence[str],
        fresh: int = 1,
    ) -> list[Candidate]:
        """What a later turn may append: the conversation's strongest tools not loaded yet.

        ``fresh`` counts the trailing messages that arrived since the last growth. Each of them
        backs growth and is judged as a possible new task: a request answered with a question
        ("check the stock price of Tesla" -> "which ticker?") must still load its tool at the
        reply ("TSLA."), which backs nothing itself, when no growth ran in between.
        """
        if not said(users):
            return []
        each, _, _, votes, parts = self._conversation(users, signals)
        final = combine(each, votes)
        have = [self.index.position[n] for n in loaded if n in self.index.position]
        new = len(said(users[len(users) - max(fresh, 1) :]))
        news = parts[len(parts) - min(max(new, 1), len(parts)) :]
        # how much a new message backs each tool: the weaker retriever's z-score (one rare word
        # can put a tool many lexical deviations out: "next" -> "stage files for the next
        # commit"; the dense side must see it too); without dense scores, the lexical z
        dense = self.index.doc_vectors is not None
        backs = [np.minimum(s.lexical_z, s.dense_z) if dense else s.lexical_z for _, s, _ in news]
        grown = growth(final, evidence(each), have, np.max(backs, axis=0))
        grown += self._new_tasks(news, backs, have, grown)
        grown += self._voted_now(signals, parts, len(news), have + grown)
        out = self._scored(grown, final)
        top = float(final[grown].max()) if grown else 0.0
        names = [c.name for c in out]
        return out + self._companions(signals, names, top, {*loaded, *names})

    def _scored(self, ids: Sequence[int], final: Row) -> list[Candidate]:
        """The tools at catalog positions ``ids`` with their conversation scores."""
        return [Candidate(self.index.names[i], "semantic", float(final[i])) for i in ids]

    def _new_tasks(
        self, news: Sequence[Part], backs: Sequence[Row], have: list[int], grown: list[int]
    ) -> list[int]:
        """Tools of the tasks the new messages start (each judged on its own scores), with their
        closest bundle-mates; none already loaded or grown."""
        out: list[int] = []
        for (scores, _, _), backed in zip(news, backs, strict=True):
            taken = grown + out
            task = new_task(scores.final, backed, have, taken)
            out += task + fresh_mates(task, scores.final, self.index.bundles, have + taken)
        return out

    def _voted_now(
        self, signals: SelectionSignals, parts: Sequence[Part], new: int, skip: list[int]
    ) -> list[int]:
        """Tools the last ``new`` messages' nearest past requests used, at most ``GROW_K``, then
        none of ``skip``.

        Growth asks them apart from the conversation's votes: a request worded like past ones
        ("dispatch a note to David") finds the tool those turns used (send_message) even when
        its own words back it too weakly for growth, where mixed with the earlier messages'
        votes it would be diluted. A vote of ``VOTE_MIN`` suffices; a weaker one
        (``NOW_VOTE_MIN``: a multi-task message splits its neighbours between its tasks) when
        one of the new messages also matches the tool (``NOW_OWN_MIN`` on its own scores).
        """
        weights = [0.0] * (len(parts) - new) + [1.0] * new
        votes = self._votes(signals, parts, weights)
        if votes is None:
            return []
        own = np.max(np.vstack([p[0].final for p in parts[len(parts) - new :]]), axis=0)
        ok = (votes >= VOTE_MIN) | ((votes >= NOW_VOTE_MIN) & (own >= NOW_OWN_MIN))
        order = np.argsort(-votes, kind="stable")
        kept: list[int] = order[ok[order]][:GROW_K].tolist()
        return [i for i in kept if i not in skip]


def _candidates(hits: Sequence[Hit]) -> list[Candidate]:
    return [Candidate(h.name, _SOURCES[h.source], float(h.score)) for h in hits]


def make_embedder(settings: Settings, store: EmbeddingCache | None) -> Embedder:
    """The embedder the settings name, with document embeddings cached in ``store``."""
    inner: Embedder
    if settings.embedder == "openai":
        url, model = str(settings.embed_base_url), settings.embed_model
        inner = OpenAIEmbedder(base_url=url, model=model, timeout=settings.embed_timeout)
    else:
        inner = default_embedder()
    cache = shared(store)  # the store, then the machine's vector file (TOOLTRAY_CACHE)
    return CachedEmbedder(inner, cache) if cache is not None else inner


def build_selector(
    specs: Sequence[ToolSpec],
    settings: Settings,
    store: EmbeddingCache | None,
    progress: Progress | None = None,
) -> IndexSelector:
    """Embed the catalog (cached) and build the hybrid index; raises EmbedderError when down.

    A store with one connection for every thread (in-memory SQLite) embeds in the foreground:
    a background read there fails inside the turn's open transaction, and selection would stay
    lexical for the process's life."""
    embedder = make_embedder(settings, store)
    shared_conn = bool(getattr(store, "single_connection", False))
    later = settings.embed_catalog == "background" and not shared_conn
    index = ToolIndex(list(specs), embedder, progress=progress, strict=True, background=later)
    return IndexSelector(index, index.embedder, settings)


def lexical_selector(specs: Sequence[ToolSpec], settings: Settings) -> IndexSelector:
    """A selector without an embedder: ``load_tools`` answers with it while none can be built."""
    return IndexSelector(ToolIndex(list(specs)), None, settings)
