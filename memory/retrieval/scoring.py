"""Scoring one query over the catalog: the text a tool is matched on, BM25, the query, and dense and
lexical scores fused on catalog z-scores.

Each retriever's scores are standardised over the whole catalog for *this* query, so the bar is
scale-free (another embedder, or BM25 with other constants, moves no tool across it) and a
retriever that sees one clear match outweighs one that sees nothing in particular, with no learnt
weight. Over a handful of tools the spread says little, so catalogs under :data:`SMALL_CATALOG`
pool it with a prior. A request is scored whole and sentence by sentence (BM25 is a sum over terms,
so the whole comes free), because a request that chains several tasks is matched task by task.
The query is the newest message (``adaptive`` lends a short follow-up the previous one's context),
since earlier ones mostly ask for tools already loaded. Ties break deterministically (score,
priority, tags named in the query, catalog order). The measurements behind each choice are in
``bench/README.md`` ("Design measurements behind the retrieval constants", "Tuned values").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import bm25s
import numpy as np
from numpy.typing import NDArray

from tooltray.memory.embedders.base import dot_rows
from tooltray.memory.embedders.words import CLITIC, STOPWORDS
from tooltray.memory.store.records import Source
from tooltray.memory.tuning import (
    ADAPTIVE_WEIGHT,
    DENSE_WEIGHT,
    ENUM_TERMS,
    LEXICAL_WEIGHT,
    MAX_SENTENCES,
    MIN_SEGMENT_WORDS,
    PRIOR_SHARE,
    PRIOR_TOOLS,
    SENTENCE_WEIGHT,
    SHORT_TERMS,
    SMALL_CATALOG,
    WEIGHTED_WEIGHT,
)
from tooltray.tools.errors import ConfigError
from tooltray.tools.spec import ToolSpec

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[_.\-/\s]+")
_WORD = re.compile(r"[A-Za-z0-9]+")
#: runs of CJK characters (kana, CJK ideographs and compatibility ideographs, hangul)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_SENTENCE = re.compile(r"(?<=[.!?;])(?<!e\.g\.)(?<!i\.e\.)\s+(?=\S)|\n+")  # "e.g." ends none


def tokenize_identifier(name: str) -> list[str]:
    """``getUserID_v2.list-items/x`` -> ``['get', 'user', 'id', 'v2', 'list', 'items', 'x']``."""
    words: list[str] = []
    for part in _SEPARATORS.split(name):
        words += [w.lower() for w in _CAMEL.split(part) if w]
    return words


def fold(word: str) -> str:
    """Crude plural folding: ``files`` -> ``file`` (not ``address`` or short words)."""
    if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """Lexical terms: identifiers split, lower-cased, stop words dropped, plurals folded.

    English clitics go first (``it's``, ``user's``, ``don't``): a lone ``s`` or ``t`` term
    matched the one description with a possessive and outscored the words that mattered.
    CJK text adds its :func:`cjk_terms`.
    """
    out: list[str] = []
    for word in _WORD.findall(CLITIC.sub("", text)):
        out += [fold(w) for w in tokenize_identifier(word) if w not in STOPWORDS]
    return out + cjk_terms(text)


def cjk_terms(text: str) -> list[str]:
    """Character bigrams of each CJK run (a lone character as itself): CJK puts no space between
    words, so a run was one term no query repeated (or, before, none at all); overlapping
    bigrams match a Chinese query's words to a description's without a segmenter."""
    out: list[str] = []
    for run in _CJK.findall(text):
        out += [run[i : i + 2] for i in range(max(1, len(run) - 1))]
    return out


def _params(spec: ToolSpec) -> str:
    props: dict[str, Any] = spec.parameters.get("properties") or {}
    parts = []
    for key, schema in props.items():
        described = isinstance(schema, dict) and isinstance(schema.get("description"), str)
        parts.append(f"{key} {schema['description']}" if described else key)
    return " ".join(parts)


def doc_text(spec: ToolSpec) -> str:
    """The embedded document: split name, description, parameter names and descriptions."""
    name = " ".join(tokenize_identifier(spec.name))
    return f"{name}: {spec.description} {_params(spec)}".strip()


def _choices(spec: ToolSpec) -> str:
    """The values a parameter's ``enum`` (or its items') offers, where there are at most
    ``ENUM_TERMS``: what the tool takes is what it does (``run-code``'s ``languageId`` lists
    ``python``; its description says only "Run code snippet"). A longer list (countries, time
    zones) names what any tool of its kind takes, and would only lengthen the document."""
    props: dict[str, Any] = spec.parameters.get("properties") or {}
    out: list[str] = []
    for schema in (p for p in props.values() if isinstance(p, dict)):
        items = schema.get("items")
        values = schema.get("enum") or (items.get("enum") if isinstance(items, dict) else None)
        if isinstance(values, list) and len(values) <= ENUM_TERMS:
            out += [v for v in values if isinstance(v, str)]
    return " ".join(out)


def lexical_terms(spec: ToolSpec) -> list[str]:
    """The BM25 document: name terms twice, description, parameter names and descriptions, and
    the parameters' short lists of choices (:func:`_choices`; lexical only: a value is a word
    to match, and the embedded document stays what the vector cache holds)."""
    name = terms(spec.name)
    text = f"{spec.name} {spec.description} {_params(spec)} {_choices(spec)}"
    return name + terms(text) or ["_"]


def segment_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of a message, short ones joined to the one before (a
    short first one to the one after: "Not yet." alone is no task, and its best tool, some
    ``files_append``, was loaded as if it were)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in [*_SENTENCE.finditer(text), None]:
        end = match.start() if match else len(text)
        part = text[start:end]
        if part.strip():
            lead = start + len(part) - len(part.lstrip())
            span = (lead, start + len(part.rstrip()))
            short = len(part.split()) < MIN_SEGMENT_WORDS
            if spans and (short or _short(text, spans) and len(spans) == 1):
                spans[-1] = (spans[-1][0], span[1])
            else:
                spans.append(span)
        start = match.end() if match else len(text)
    return spans


def _short(text: str, spans: list[tuple[int, int]]) -> bool:
    a, b = spans[-1]
    return len(text[a:b].split()) < MIN_SEGMENT_WORDS


def segments(text: str) -> list[str]:
    """Sentences of a message (short ones joined to the one before): the intents of a request.

    A message that asks for three things in three sentences is matched sentence by sentence as
    well as whole, so one intent's tools do not crowd out another's.
    """
    return [text[a:b] for a, b in segment_spans(text)]


Scores = NDArray[np.float64]


class LexicalIndex:
    """A BM25 index of one catalog.

    Args:
        specs: the tools, in index order.
    """

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        self.size = len(specs)
        self._bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        if specs:
            self._bm25.index([lexical_terms(s) for s in specs], show_progress=False)

    def scores(self, words: Sequence[str]) -> Scores:
        """BM25 score of every tool for the query terms ``words`` (zeros when none match)."""
        if not words or not self.size:
            return np.zeros(self.size)
        return np.asarray(self._bm25.get_scores(list(words)), dtype=np.float64)

    def rows(self, queries: Sequence[Sequence[str]]) -> Scores:
        """One row of scores per query term list."""
        out = np.zeros((len(queries), self.size))
        for i, words in enumerate(queries):
            out[i] = self.scores(words)
        return out


QUERY_MODES = ("adaptive", "current", "current+previous", "weighted", "all")
DEFAULT_MODE = "adaptive"


@dataclass(frozen=True)
class Query:
    """A retrieval query: the text matched in full, plus optional context at a lower weight.

    Attributes:
        text: the main text (the current user message, or a search string).
        context: earlier text scored separately and added at ``context_weight``.
        context_weight: 0 for none.
    """

    text: str
    context: str = ""
    context_weight: float = 0.0

    def __str__(self) -> str:
        return self.text


def build_query(user_messages: Sequence[str], mode: str = DEFAULT_MODE) -> Query:
    """The retrieval query for the latest turn from the user messages (oldest first).

    Args:
        user_messages: the conversation's user messages; assistant text is never used.
        mode: one of :data:`QUERY_MODES` (see the module docstring for measurements).

    Raises:
        ConfigError: unknown ``mode``.
    """
    if mode not in QUERY_MODES:
        raise ConfigError(f"Unknown query mode {mode!r}: use one of {', '.join(QUERY_MODES)}.")
    users = [m for m in user_messages if m and m.strip()]
    if not users:
        return Query("")
    current, previous = users[-1], users[-2] if len(users) > 1 else ""
    if mode == "current" or not previous:
        return Query(current)
    if mode == "current+previous":
        return Query(f"{current} {previous}")
    if mode == "all":
        return Query(" ".join(users))
    if mode == "weighted":
        return Query(current, previous, WEIGHTED_WEIGHT)
    if len(terms(current)) < SHORT_TERMS:
        return Query(current, previous, ADAPTIVE_WEIGHT)
    return Query(current)


def parse_select(text: str) -> list[str] | None:
    """``select:a,b`` -> ``['a', 'b']`` (exact names); ``None`` for any other query."""
    if not text.startswith("select:"):
        return None
    return [w.strip() for w in text[len("select:") :].split(",") if w.strip()]


def parse_required(text: str) -> tuple[str, list[str]]:
    """``+slack send a message`` -> (``send a message``, ``['slack']``).

    A ``+term`` must occur in the tool name (case-insensitive); the rest ranks. A query made only
    of required terms ranks by those terms.
    """
    words = text.split()
    if "+" not in text:  # nearly every query: nothing required
        return " ".join(words), []
    required = [w[1:].lower() for w in words if w.startswith("+") and len(w) > 1]
    rest = " ".join(w for w in words if not w.startswith("+"))
    return (rest or " ".join(required)), required


Matrix = NDArray[np.float64]


def spread(rows: Matrix) -> Matrix:
    """Each row's standard deviation pooled with the prior (see the module docstring)."""
    n = rows.shape[1]
    if n >= SMALL_CATALOG:
        return np.asarray(rows.std(axis=1, keepdims=True), dtype=np.float64)
    prior = PRIOR_SHARE**2 * (rows**2).mean(axis=1, keepdims=True)
    pooled = (n * rows.var(axis=1, keepdims=True) + PRIOR_TOOLS * prior) / (n + PRIOR_TOOLS)
    return np.asarray(np.sqrt(pooled), dtype=np.float64)


def zscores(scores: NDArray[Any]) -> Matrix:
    """Each row standardised over its columns (rows without spread become zeros)."""
    s = np.asarray(scores, dtype=np.float64)
    flat = s.ndim == 1
    rows = s[None, :] if flat else s
    mean = rows.mean(axis=1, keepdims=True)
    std = spread(rows)
    out = np.where(std > 1e-12, (rows - mean) / np.maximum(std, 1e-12), 0.0)
    return out[0] if flat else out


def fuse(lexical: NDArray[Any], dense: NDArray[Any] | None) -> tuple[Matrix, Matrix, Matrix]:
    """Fused calibrated scores and the two z-score matrices they came from.

    Without dense scores (no embedder, or it is down) the fused score is the lexical z-score.
    """
    zl = zscores(lexical)
    if dense is None:
        return zl, zl, np.zeros_like(zl)
    zd = zscores(dense)
    return LEXICAL_WEIGHT * zl + DENSE_WEIGHT * zd, zl, zd


class TieBreak:
    """Ranks tools by score with ties broken by ``priority`` and tag matches, never by chance.

    Args:
        specs: the catalog, in index order.
    """

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        self.priority = np.array([s.priority for s in specs], dtype=np.float64)
        self.tags = [frozenset(t for tag in s.tags for t in terms(tag)) for s in specs]
        self.any_tags = any(self.tags)
        self.tagged: dict[str, list[int]] = {}  # tag term -> the tools it tags
        for i, tags in enumerate(self.tags):
            for term in tags:
                self.tagged.setdefault(term, []).append(i)

    def top(self, scores: NDArray[np.float64], k: int, query: str = "") -> list[int]:
        """Indices of the ``k`` best finite scores, best first (every tie at the cut-off kept
        in play until the tie-break decides)."""
        n = len(scores)
        if k <= 0 or n == 0:
            return []
        if k < n:
            cut = np.partition(scores, n - k)[n - k]
            idx = np.flatnonzero(scores >= cut)
        else:
            idx = np.arange(n)
        idx = idx[np.isfinite(scores[idx])]
        tag_hits = np.zeros(n)  # per tool, how many of the query's words tag it
        for word in set(terms(query)) if self.any_tags else ():
            tag_hits[self.tagged.get(word, [])] += 1.0
        order = np.lexsort((idx, -tag_hits[idx], -self.priority[idx], -scores[idx]))
        return list(idx[order][:k].tolist())


ALWAYS: tuple[Source, ...] = ("core", "pinned")
"""Sources that are always loaded, outside every cap, and never unloaded."""


@dataclass(frozen=True)
class Candidate:
    """A tool proposed for the loaded set, with why (``source``) and how strongly (``score``);
    ``chance``: its chance of being needed where a signal knows it apart from the score (a
    usage prior), which the opening's pricing takes when it is the larger. A ``mention`` is the
    bundle of a search's match past its answer: named to the model, not loaded."""

    name: str
    source: Source
    score: float | None = None
    chance: float | None = None
    mention: bool = False


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
    sentences = tuple(query.text[a:b] for a, b in spans) if spans else ()
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
