"""``ToolIndex``: BM25 and dense vectors over one catalog, searched together.

``search`` ranks; ``picks`` says what to load (see :mod:`.picks` for the bar and its numbers).
Scores are calibrated per query over the catalog (:mod:`.fusion`), a request is scored whole and
sentence by sentence (:mod:`.scoring`), bundle-mates lift each other (:mod:`.bundles`). A
failing embedder degrades search to lexical and sets ``degraded``; ``strict`` raises instead.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.embedders.base import CachedEmbedder, EmbeddingCache, Progress
from tooltray.memory.retrieval.bundles import Bundles
from tooltray.memory.retrieval.lexical import LexicalIndex
from tooltray.memory.retrieval.picks import bar, choose, mates, reserve, sentence_best
from tooltray.memory.retrieval.query import (
    DEFAULT_MODE,
    Query,
    build_query,
    parse_required,
    parse_select,
)
from tooltray.memory.retrieval.ranking import TieBreak
from tooltray.memory.retrieval.scoring import (
    QueryPlan,
    Scored,
    dense_rows,
    lexical_rows,
    plan_query,
    score,
)
from tooltray.memory.retrieval.text import doc_text
from tooltray.memory.tuning import AGREE_Z, STRONG_RATIO
from tooltray.tools.errors import EmbedderError
from tooltray.tools.spec import ToolSpec

log = logging.getLogger("tooltray")
HitSource = Literal["semantic", "lexical", "bundle", "select"]
Method = Literal["hybrid", "lexical", "dense"]
QueryLike = str | Query | Sequence[str]


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

    Attributes:
        degraded: why search is lexical-only although an embedder was given, else ``None``.
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
        if self.embedder is not None:
            self.doc_vectors = self._embed_docs([doc_text(s) for s in self.specs], progress)

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
        if not self.dense_ready:
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
    ) -> tuple[Scored, list[str]]:
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

    def _beside_excluded(self, final: Any, skip: set[int], k: int) -> list[int]:
        """Bundle-mates of the best match, best first, when that match is in ``skip`` (else
        none); ``final`` still holds the scores of the tools in ``skip``."""
        if k < 1 or not skip or not len(final):
            return []
        best = int(np.argmax(final))
        if best not in skip or not np.isfinite(final[best]):
            return []
        kin = self.bundles.close_mates([best], final, -np.inf, skip)
        return [m for m in kin if np.isfinite(final[m])][: 2 * k]

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

    def picks(
        self,
        query: QueryLike,
        max_tools: int = 16,
        *,
        query_vector: Any = None,
        exclude: Collection[str] = (),
        pull: bool = True,
        siblings: int = 0,
    ) -> list[Hit]:
        """What to load for ``query`` (a string, a Query, or the user messages so far).

        The tools whose hybrid score clears ``max(2, 0.5 x top)`` (at least the best 3 above the
        catalog mean), then each sentence's best tools that clear ``0.85 x`` that sentence's top
        (up to half of ``max_tools``, kept under the cap first), then bundle-mates of strong
        matches in small bundles (unless ``pull`` is off); at most ``max_tools``, in that order
        (``siblings`` come on top).
        Tools in ``exclude`` are never picked and do not set the bar (a ``load_tools`` query
        wants tools not loaded yet). When the query's best match overall is in ``exclude``, up
        to ``siblings`` of its bundle-mates not excluded join last, best first: the model asked
        although that match is loaded, so what it lacks is most likely a helper beside it.
        """
        q = self.as_query(query)
        selected = parse_select(q.text)
        if selected is not None:
            return self._select(selected)[:max_tools]
        s, required = self.score(q, "hybrid", query_vector)
        final = self._final(s, required, lift=True)
        skip = {self.position[n] for n in exclude if n in self.position}
        kin = self._beside_excluded(final, skip, siblings)
        if skip:
            final = final.copy()
            final[list(skip)] = -np.inf
        main, chosen = choose(final, [s.sentences], self.ties, q.text, max_tools)
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
