"""One query's calibrated scores over a catalog: whole message, each sentence, and context.

A request that asks for three things in three sentences is scored whole and sentence by sentence;
the final score is ``(whole + 0.5 x best sentence) / 1.5``, and in ``picks`` each sentence's best
tools are reserved a place, because a request that chains three or four tasks (sealtools,
toolbench) is matched task by task, which the whole message alone blurs; single-task requests
score the same either way (``bench/README.md`` has the figures).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.embedders.base import dot_rows
from tooltray.memory.retrieval.fusion import fuse
from tooltray.memory.retrieval.lexical import LexicalIndex
from tooltray.memory.retrieval.query import Query
from tooltray.memory.retrieval.text import segment_spans, terms
from tooltray.memory.tuning import MAX_SENTENCES, SENTENCE_WEIGHT

Matrix = NDArray[np.float64]


@dataclass(frozen=True)
class QueryPlan:
    """The texts one query is scored on, in the row order of its query vectors."""

    text: str
    sentences: tuple[str, ...]
    context: str
    context_weight: float
    spans: tuple[tuple[int, int], ...] = ()

    @property
    def texts(self) -> list[str]:
        """Whole text, then its sentences (when more than one), then the context (if any)."""
        return [self.text, *self.sentences, *([self.context] if self.context else [])]


def plan_query(query: Query) -> QueryPlan:
    """Split ``query`` into the texts it is scored on (sentences only for 2 to 8 of them)."""
    spans = segment_spans(query.text)
    if not 1 < len(spans) <= MAX_SENTENCES:
        spans = []
    sentences = tuple(query.text[a:b] for a, b in spans)
    context = query.context if query.context_weight > 0 else ""
    weight = query.context_weight if context else 0.0
    return QueryPlan(query.text, sentences, context, weight, tuple(spans))


@dataclass(frozen=True)
class Scored:
    """Calibrated scores of every tool for one query.

    Attributes:
        fused: the final score (before bundle lift).
        lexical_z: whole-message lexical z-scores.
        dense_z: whole-message dense z-scores (zeros without an embedder).
        sentences: one row of fused scores per sentence (no rows for a one-sentence message).
    """

    fused: Matrix
    lexical_z: Matrix
    dense_z: Matrix
    sentences: Matrix


def lexical_rows(index: LexicalIndex, p: QueryPlan) -> Matrix:
    """BM25 rows for the plan's texts (the whole message is the sum of its sentences)."""
    if not p.sentences:
        rows = [index.scores(terms(p.text))]
    else:
        parts = index.rows([terms(s) for s in p.sentences])
        rows = [parts.sum(axis=0), *parts]
    if p.context:
        rows.append(index.scores(terms(p.context)))
    return np.vstack(rows)


def score(lexical: Matrix, dense: Matrix | None, p: QueryPlan) -> Scored:
    """Combine per-text lexical and dense rows (same row order as ``p.texts``) into scores."""
    fused, zl, zd = fuse(lexical, dense)
    n_sent = len(p.sentences)
    final = fused[0]
    sentences = fused[1 : 1 + n_sent]
    if n_sent:
        final = (final + SENTENCE_WEIGHT * sentences.max(axis=0)) / (1.0 + SENTENCE_WEIGHT)
    if p.context:
        final = final + p.context_weight * fused[-1]
    return Scored(final, zl[0], zd[0], sentences)


def dense_rows(
    doc_vectors: NDArray[np.float32], vectors: NDArray[np.float32], p: QueryPlan
) -> Matrix:
    """Cosine rows for the plan's texts; a single whole-message vector scores only that row.

    With one vector for a longer plan, the other rows copy the whole-message row, so sentences
    are told apart by their lexical scores alone.
    """
    vec = np.asarray(vectors, dtype=np.float32)
    if vec.ndim == 1:
        vec = vec[None, :]
    n = len(p.texts)
    rows = vec if vec.shape[0] == n else vec[:1]
    cos = dot_rows(doc_vectors, rows).astype(np.float64)
    return cos if cos.shape[0] == n else np.repeat(cos, n, axis=0)
