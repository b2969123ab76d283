"""The catalog index and what loads from it: :class:`ToolIndex`, bundle cohesion and the pick rule.

A strong match lifts its bundle-mates and pulls small bundles in whole, because a conversation
keeps working inside one class of tools: loading the class once costs fewer tokens over a session
than the escapes it prevents (each one a round trip and a prompt-prefix change). The bar a tool
must clear is relative to the query's best fused score, never an absolute cosine, since how far the
best matches stand out depends on the catalog's size. A failing embedder degrades search to
lexical and sets ``degraded``; ``strict`` raises instead. The values are in
:mod:`tooltray.memory.tuning`, their measurements in ``bench/README.md`` ("The bar", "Tuned
values": bundles).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.embedders.background import VectorJob, as_cached
from tooltray.memory.embedders.base import CachedEmbedder, EmbeddingCache, Progress
from tooltray.memory.retrieval.scoring import (
    DEFAULT_MODE,
    LexicalIndex,
    Query,
    QueryPlan,
    Scored,
    TieBreak,
    build_query,
    dense_rows,
    doc_text,
    lexical_rows,
    parse_required,
    parse_select,
    plan_query,
    score,
)
from tooltray.memory.tuning import (
    AGREE_Z,
    BAR_FLOOR,
    BAR_RATIO,
    LIFT,
    MIN_PICKS,
    PULL_FLOOR,
    PULL_MAX_BUNDLE,
    PULL_RATIO,
    SENTENCE_RATIO,
    SENTENCE_TOP,
    STRONG_RATIO,
)
from tooltray.tools.errors import EmbedderError
from tooltray.tools.spec import ToolSpec


class Bundles:
    """The bundle structure of one catalog, laid out for vectorised per-query work.

    Args:
        bundles: each tool's bundle name (or ``None``), in index order.
    """

    def __init__(self, bundles: Sequence[str | None]) -> None:
        groups: dict[str, list[int]] = {}
        for i, b in enumerate(bundles):
            if b is not None:
                groups.setdefault(b, []).append(i)
        shared = [idx for idx in groups.values() if len(idx) > 1]
        self.alone = np.array([idx[0] for idx in groups.values() if len(idx) == 1], np.int64)
        self.members = {b: tuple(idx) for b, idx in groups.items()}
        self.of = list(bundles)
        self.perm = np.array([i for idx in shared for i in idx], dtype=np.int64)
        sizes = np.array([len(idx) for idx in shared], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.size_of = np.repeat(sizes, sizes)
        self.group_of = np.repeat(np.arange(len(shared)), sizes)

    def best_mate(self, scores: NDArray[np.float64]) -> NDArray[np.float64]:
        """For each tool, the best score among its bundle-mates (``-inf`` without mates)."""
        out = np.full(scores.shape, -np.inf)
        if not len(self.perm):
            return out
        g = scores[self.perm]
        first = np.maximum.reduceat(g, self.starts)[self.group_of]
        is_top = g >= first
        n_top = np.add.reduceat(is_top.astype(np.int64), self.starts)[self.group_of]
        second = np.maximum.reduceat(np.where(is_top, -np.inf, g), self.starts)[self.group_of]
        out[self.perm] = np.where(is_top & (n_top == 1), second, first)
        return out

    def lift(self, scores: NDArray[np.float64]) -> NDArray[np.float64]:
        """``scores`` plus each tool's share of its best mate's (positive) score; the one tool
        of a one-tool bundle is its own best mate. Without that, a server's lone tool (``fetch``)
        lost its place to any look-alike whose server has a second tool that matches, and no
        mate of its own could vouch for it (bench/README.md, stop 52)."""
        out: NDArray[np.float64] = scores.copy()
        out[self.alone] += LIFT * np.maximum(scores[self.alone], 0.0)
        if not len(self.perm):
            return out
        mate = np.maximum(self.best_mate(scores)[self.perm], 0.0)
        out[self.perm] += LIFT * mate / np.sqrt(self.size_of - 1)
        return out

    def pull_in(self, tool: int, scores: NDArray[np.float64], top: float) -> list[int]:
        """Mates of ``tool`` to load with it: strong match, small bundle, mates above the floor."""
        bundle = self.of[tool]
        if bundle is None or scores[tool] < PULL_RATIO * top:
            return []
        mates = self.members[bundle]
        if len(mates) > PULL_MAX_BUNDLE:
            return []
        return [m for m in mates if m != tool and scores[m] > PULL_FLOOR]

    def close_mates(
        self, tools: Sequence[int], scores: NDArray[np.float64], floor: float, skip: set[int]
    ) -> list[int]:
        """Bundle-mates of ``tools`` scoring at least ``floor``, best first, none in ``skip``."""
        seen, out = set(skip) | set(tools), []
        for tool in tools:
            bundle = self.of[tool]
            for m in self.members.get(bundle, ()) if bundle is not None else ():
                if m not in seen and scores[m] >= floor:
                    seen.add(m)
                    out.append(m)
        return sorted(out, key=scores.__getitem__, reverse=True)  # stable: ties keep order


Scores = NDArray[np.float64]


def bar(top: float) -> float:
    """The score a tool must reach, given the query's best score."""
    return max(BAR_FLOOR, BAR_RATIO * top)


def over_bar(order: Sequence[int], final: Scores) -> list[int]:
    """The ranked tools that clear the bar, and at least the best 3 above the catalog mean."""
    if not order:
        return []
    line = bar(float(final[order[0]]))
    return [i for r, i in enumerate(order) if final[i] >= line or (r < MIN_PICKS and final[i] > 0)]


def sentence_best(
    sentences: Scores,
    final: Scores,
    ties: TieBreak,
    text: str,
    have: Sequence[int] = (),
    per: int = SENTENCE_TOP,
) -> list[int]:
    """Each sentence's best ``per`` tools over ``max(2, 0.85 x`` its top), not in ``have``."""
    seen, out = set(have), []
    for row in sentences:
        line = max(BAR_FLOOR, SENTENCE_RATIO * float(row.max()))
        for i in ties.top(row, per, text):
            if row[i] >= line and i not in seen and np.isfinite(final[i]):
                seen.add(i)
                out.append(i)
    return out


def choose(
    final: Scores, sentence_rows: Sequence[Scores], ties: TieBreak, text: str, k: int
) -> tuple[list[int], list[int]]:
    """The pick rule: ``(main, chosen)`` for the scores ``final`` of a query or conversation.

    ``main`` is the ranked tools over the bar (:func:`over_bar`); ``chosen`` adds each row's
    best tools of ``sentence_rows`` (:func:`sentence_best`, in order, up to ``k // 2`` of
    them), keeping them under the cap of ``k`` before ``main``'s tail. No ``main``, no pick.
    """
    main = over_bar(ties.top(final, k, text), final)
    if not main or k < 1:
        return main, []
    extra: list[int] = []
    for rows in sentence_rows:
        extra += sentence_best(rows, final, ties, text, main + extra)
    extra = extra[: k // 2]
    return main, main[: k - len(extra)] + extra


def mates(chosen: Sequence[int], final: Scores, bundles: Bundles) -> list[int]:
    """Bundle-mates the chosen tools pull in (strong matches in small bundles only)."""
    if not chosen:
        return []
    top = float(final[list(chosen)].max())
    seen, out = set(chosen), []
    for i in chosen:
        for m in bundles.pull_in(i, final, top):
            if m not in seen and np.isfinite(final[m]):
                seen.add(m)
                out.append(m)
    return out


def reserve(order: list[int], wanted: Sequence[int], final: Scores, k: int) -> list[int]:
    """``order`` cut to ``k`` with places kept for ``wanted``, best score first."""
    missing = [i for i in wanted if i not in order]
    if not missing or k < 1:
        return order[:k]
    kept = order[: max(k - len(missing), 0)] + missing[:k]
    rank = {i: r for r, i in enumerate(order)}
    return sorted(kept, key=lambda i: (-float(final[i]), rank.get(i, k)))


log = logging.getLogger("tooltray")
HitSource = Literal["semantic", "lexical", "bundle", "select"]
Method = Literal["hybrid", "lexical", "dense"]
QueryLike = str | Query | Sequence[str]
Scoring = tuple[Scored, list[str]]
"""What :meth:`ToolIndex.score` returns: the tools' scores and the terms a name must hold."""


@dataclass(frozen=True)
class Hit:
    """One retrieved tool.

    Attributes:
        name: the tool.
        score: its calibrated fused score (z-units over the catalog; 99 for ``select:``).
        source: ``semantic`` or ``lexical`` (the side that rated it higher), ``bundle`` (there
            through a bundle-mate), ``select`` (named exactly).
        rank: position in the result, from 0.
        strong: a strong match (at least 0.8 x the query's top score).
        agree: both retrievers put it at least 2 deviations above the catalog.
    """

    name: str
    score: float
    source: HitSource
    rank: int
    strong: bool = False
    agree: bool = False


class ToolIndex:
    """The retrieval index of one catalog: lexical always, dense when an embedder works.

    Args:
        specs: the catalog (allowed tools only).
        embedder: anything with ``embed(texts, kind)``; ``None`` for lexical-only search.
        cache: where document vectors persist (wraps ``embedder`` in a CachedEmbedder).
        progress: ``progress(done, total)`` while documents are embedded.
        strict: raise EmbedderError instead of degrading to lexical search.
        query_mode: how ``picks`` turns a list of user messages into a query.
        background: vectors missing from the memo and cache are computed by a
            :class:`~tooltray.memory.embedders.background.VectorJob`; search is lexical until
            they are ready (:meth:`wait_for_vectors` blocks for them).

    Attributes:
        degraded: why search is lexical-only although an embedder was given, else ``None``.
        vectors: the document vectors once computed (kept when search degrades to lexical).
        job: the background job computing them, if one was started.
    """

    def __init__(
        self,
        specs: Sequence[ToolSpec],
        embedder: Any = None,
        *,
        cache: EmbeddingCache | None = None,
        progress: Progress | None = None,
        strict: bool = False,
        query_mode: str = DEFAULT_MODE,
        background: bool = False,
    ) -> None:
        self.specs = list(specs)
        self.names = [s.name for s in self.specs]
        self.position = {n: i for i, n in enumerate(self.names)}
        self.strict = strict
        self.query_mode = query_mode
        self.degraded: str | None = None
        if embedder is not None and cache is not None:
            embedder = CachedEmbedder(embedder, cache)
        self.embedder = embedder
        self.lexical = LexicalIndex(self.specs)
        self.bundles = Bundles([s.bundle for s in self.specs])
        self.ties = TieBreak(self.specs)
        self.doc_vectors: NDArray[np.float32] | None = None
        self.vectors: NDArray[np.float32] | None = None
        self.job: VectorJob | None = None
        if self.embedder is None:
            return
        texts = [doc_text(s) for s in self.specs]
        if background:
            self._embed_later(texts)
        else:
            self.doc_vectors = self.vectors = self._embed_docs(texts, progress)

    def _embed_later(self, texts: list[str]) -> None:
        """Known vectors at once; unknown ones from a background job, lexical meanwhile."""
        self.embedder = as_cached(self.embedder)
        known = self.embedder.lookup_all(texts)
        if known is not None:
            self.doc_vectors = self.vectors = known
        else:
            self.job = VectorJob(self.embedder, texts, self._ready).start()

    def _ready(self, vectors: Any) -> None:
        self.vectors = np.asarray(vectors, np.float32)
        if self.degraded is None:
            self.doc_vectors = self.vectors

    def wait_for_vectors(self, timeout: float | None = None) -> bool:
        """Block until the document vectors are ready (batch users, benches); True when dense
        scores are available, False on timeout, failure or a lexical-only index."""
        if self.job is not None:
            self.job.wait(timeout)
        return self.dense_ready

    def _fail(self, exc: EmbedderError) -> None:
        if self.strict:
            raise exc
        if self.degraded is None:
            log.error("tooltray: embedder failed, searching lexically only: %s", exc)
        self.degraded = str(exc)
        self.doc_vectors = None

    def _embed_docs(self, texts: list[str], progress: Progress | None) -> Any:
        try:
            if hasattr(self.embedder, "embed_documents"):
                return np.asarray(self.embedder.embed_documents(texts, progress), np.float32)
            vectors = np.asarray(self.embedder.embed(texts, "document"), np.float32)
        except EmbedderError as exc:
            self._fail(exc)
            return None
        if progress is not None:
            progress(len(texts), len(texts))
        return vectors

    @property
    def dense_ready(self) -> bool:
        """True when dense scores are available (an embedder that has not failed)."""
        return self.doc_vectors is not None

    def as_query(self, query: QueryLike) -> Query:
        """A Query from a string, a Query, or the user messages of a conversation."""
        if isinstance(query, Query):
            return query
        if isinstance(query, str):
            return Query(query)
        return build_query(list(query), self.query_mode)

    def query_texts(self, query: QueryLike) -> list[str]:
        """The texts a query is embedded as (for precomputing ``query_vector``)."""
        q = self.as_query(query)
        return plan_query(Query(parse_required(q.text)[0], q.context, q.context_weight)).texts

    def embed_query(self, query: QueryLike) -> NDArray[np.float32] | None:
        """The query's vectors, one row per :meth:`query_texts` (``None`` when lexical-only)."""
        if self.doc_vectors is None:
            return None
        q = self.as_query(query)
        p = plan_query(Query(parse_required(q.text)[0], q.context, q.context_weight))
        try:
            if p.spans and hasattr(self.embedder, "embed_spans"):
                vectors = self.embedder.embed_spans(p.text, p.spans, "query")
            else:
                vectors = self.embedder.embed([p.text, *p.sentences], "query")
            if p.context:
                vectors = np.vstack([vectors, self.embedder.embed([p.context], "query")])
        except EmbedderError as exc:
            self._fail(exc)
            return None
        return np.asarray(vectors, np.float32)

    def score(
        self, query: QueryLike, method: Method = "hybrid", query_vector: Any = None
    ) -> Scoring:
        """Calibrated scores of every tool, and the ``+terms`` a name must contain."""
        q = self.as_query(query)
        text, required = parse_required(q.text)
        p = plan_query(Query(text, q.context, q.context_weight))
        lexical = lexical_rows(self.lexical, p)
        dense = self._dense(p, q, query_vector) if method != "lexical" else None
        if method == "dense" and dense is not None:
            lexical = np.zeros_like(lexical)
        return score(lexical, dense, p), required

    def _dense(self, p: QueryPlan, q: Query, query_vector: Any) -> Any:
        if query_vector is None:
            query_vector = self.embed_query(q)
        if query_vector is None or self.doc_vectors is None:
            return None
        return dense_rows(self.doc_vectors, np.asarray(query_vector, np.float32), p)

    def _final(self, s: Scored, required: list[str], lift: bool) -> NDArray[np.float64]:
        final = self.bundles.lift(s.fused) if lift else s.fused
        if required:
            ok = np.array([all(t in n.lower() for t in required) for n in self.names])
            final = np.where(ok, final, -np.inf)
        return final

    def _beside_excluded(self, final: Any, skip: set[int], k: int) -> tuple[list[int], float]:
        """When the best match is in ``skip``: up to ``2 k`` of its bundle-mates, best first, and
        ``BAR_RATIO`` of its score (else none and -inf); ``final`` still holds the scores of the
        tools in ``skip``."""
        if not skip or not len(final):
            return [], -np.inf
        best = int(np.argmax(final))
        if best not in skip or not np.isfinite(final[best]):
            return [], -np.inf
        finite = float(np.finfo(np.float64).min)  # a floor every finite score clears
        kin = self.bundles.close_mates([best], final, finite, skip)[: 2 * k] if k > 0 else []
        return kin, BAR_RATIO * float(final[best])

    def _hit(self, i: int, final: Any, s: Scored, rank: int, top: float, src: Any = None) -> Hit:
        source: HitSource = src or ("semantic" if s.dense_z[i] > s.lexical_z[i] else "lexical")
        agree = bool(min(s.lexical_z[i], s.dense_z[i]) >= AGREE_Z)
        strong = bool(final[i] >= STRONG_RATIO * top and final[i] > 0)
        return Hit(self.names[i], float(final[i]), source, rank, strong, agree)

    def _select(self, names: list[str]) -> list[Hit]:
        known = [n for n in dict.fromkeys(names) if n in self.position]
        return [Hit(n, 99.0, "select", r, True, False) for r, n in enumerate(known)]

    def search(
        self, query: QueryLike, k: int = 10, method: Method = "hybrid", *, query_vector: Any = None
    ) -> list[Hit]:
        """The ``k`` best tools by ``hybrid`` (with bundle lift), ``lexical`` or ``dense`` scores.

        ``select:a,b`` returns exactly those tools; ``+term rest`` keeps tools whose name holds
        ``term``, ranked by ``rest``. Never raises for a failing embedder unless ``strict``.
        """
        q = self.as_query(query)
        selected = parse_select(q.text)
        if selected is not None:
            return self._select(selected)[:k]
        s, required = self.score(q, method, query_vector)
        final = self._final(s, required, lift=method == "hybrid")
        best = sentence_best(s.sentences, final, self.ties, q.text, per=1)
        order = reserve(self.ties.top(final, k, q.text), best, final, k)
        top = float(final[order[0]]) if order else 0.0
        return [self._hit(i, final, s, r, top) for r, i in enumerate(order)]

    def _positions(self, names: Iterable[str]) -> Iterator[int]:
        """The index positions of ``names``, less those not in the index."""
        return map(self.position.__getitem__, filter(self.position.__contains__, names))

    def beyond(
        self,
        query: QueryLike,
        k: int,
        *,
        query_vector: Any = None,
        exclude: Collection[str] = (),
        scored: Scoring | None = None,
    ) -> list[str]:
        """The bundles of the ``k`` best tools for ``query`` past ``exclude``, best first, by the
        hybrid score :meth:`picks` ranks on, with no bar: what a search names past its answer.
        ``scored``: the query's :meth:`score`, when the caller has it."""
        q = self.as_query(query)
        if parse_select(q.text) is not None:
            return []
        s, required = scored or self.score(q, "hybrid", query_vector)
        final = self._final(s, required, lift=True).copy()
        final[[*self._positions(exclude)]] = -np.inf
        order = np.argsort(-final, kind="stable")[:k]
        order = order[np.isfinite(final[order])]
        return [*dict.fromkeys(filter(None, map(self.bundles.of.__getitem__, order)))]

    def picks(
        self,
        query: QueryLike,
        max_tools: int = 16,
        *,
        query_vector: Any = None,
        exclude: Collection[str] = (),
        pull: bool = True,
        siblings: int = 0,
        context: Any = None,
        floor: bool = False,
        scored: Scoring | None = None,
    ) -> list[Hit]:
        """What to load for ``query`` (a string, a Query, or the user messages so far).

        The tools whose hybrid score clears ``max(2, 0.5 x top)`` (at least the best 3 above the
        catalog mean), then each sentence's best tools that clear ``0.85 x`` that sentence's top
        (up to half of ``max_tools``, kept under the cap first), then bundle-mates of strong
        matches in small bundles (unless ``pull`` is off); at most ``max_tools``, in that order
        (``siblings`` come on top). ``context``: a row of scores added to the query's (the
        session's own, ``IndexSelector.search``).
        Tools in ``exclude`` are never picked and do not set the bar (a ``load_tools`` query
        wants tools not loaded yet). When the query's best match overall is in ``exclude``, up
        to ``siblings`` of its bundle-mates not excluded join last, best first: the model asked
        although that match is loaded, so what it lacks is most likely a helper beside it; with
        ``floor``, a tool not excluded must then reach ``BAR_RATIO`` of that match's score.
        ``scored``: the query's :meth:`score`, when the caller has it (a search picks several
        times from one scoring).
        """
        q = self.as_query(query)
        selected = parse_select(q.text)
        if selected is not None:
            return self._select(selected)[:max_tools]
        s, required = scored or self.score(q, "hybrid", query_vector)
        final = self._final(s, required, lift=True)
        final = final if context is None else final + context
        skip = set(self._positions(exclude))
        kin, least = self._beside_excluded(final, skip, siblings)
        if skip:
            final = final.copy()
            final[list(skip)] = -np.inf
        main, chosen = choose(final, [s.sentences], self.ties, q.text, max_tools)
        if floor and least > -np.inf:  # under it: noise beside the loaded best (selector)
            keep = final >= least
            main, chosen = [*filter(keep.__getitem__, main)], [*filter(keep.__getitem__, chosen)]
        if not (main or kin) or max_tools < 1:
            return []
        pulled = mates(chosen, final, self.bundles)[: max_tools - len(chosen)] if pull else []
        pulled += [i for i in kin if i not in chosen and i not in pulled][:siblings]
        top = float(final[(main or kin)[0]])
        lifted = [i for i in chosen if s.fused[i] < bar(top) <= final[i]]
        sources = dict.fromkeys([*lifted, *pulled], "bundle")
        return [
            self._hit(i, final, s, r, top, sources.get(i)) for r, i in enumerate(chosen + pulled)
        ]
