"""Hybrid tool retrieval: BM25 plus dense cosine, fused on a catalog-calibrated scale.

Scores of each retriever are turned into z-scores over the whole catalog for the query at hand, so
the bar a tool must clear is "this many standard deviations above the catalog", whatever the
embedder's cosine scale: an affine change of cosines (another embedder, a shifted or compressed
space) changes no pick. The fused score is 0.4 x lexical z + 0.6 x dense z: measured on the five
dev corpora against equal weights, weights by each side's peak z, by its top-1/top-5 gap, and RRF,
it gave the best R@10 and C@10 on four of five (sealtools, where BM25 dominates, lost 1.6 points).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import bm25s
import numpy as np
from numpy.typing import NDArray

from tooltray.tools.spec import ToolSpec

STOPWORDS = frozenset(
    (
        "a an and are as at be by can for from get i in is it me my of on or please the this to "
        "with you your what which who how do does did"
    ).split()
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[A-Za-z0-9]+")
Progress = Callable[[int, int], None]
AGREE_Z = 2.0
LEXICAL_WEIGHT = 0.4


def split_identifier(name: str) -> list[str]:
    """``getUserID_v2.list-items/x`` -> ``get user id v2 list items x`` (lower-cased words)."""
    words: list[str] = []
    for part in re.split(r"[_.\-/\s]+", name):
        words += [w.lower() for w in _CAMEL.split(part) if w]
    return words


def terms(text: str) -> list[str]:
    """Lexical terms: identifiers split, lower-cased, stop words dropped, crude plural folding."""
    out = []
    for word in _WORD.findall(text):
        for w in split_identifier(word):
            if w in STOPWORDS:
                continue
            out.append(w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def doc_text(spec: ToolSpec) -> str:
    """What a tool is matched on: split name, description, parameter names and descriptions."""
    props = spec.parameters.get("properties", {}) or {}
    params = " ".join(
        f"{k} {v.get('description', '')}" if isinstance(v, dict) else k for k, v in props.items()
    )
    return f"{' '.join(split_identifier(spec.name))}: {spec.description} {params}".strip()


def zscores(scores: NDArray[Any]) -> NDArray[np.float64]:
    """Scores standardised over the catalog (all zeros when the scores carry no signal)."""
    s = np.asarray(scores, dtype=np.float64)
    std = float(s.std())
    return (s - float(s.mean())) / std if std > 1e-12 else np.zeros_like(s)


@dataclass(frozen=True)
class Hit:
    """One retrieved tool: fused calibrated score, which retriever found it, rank, strength."""

    name: str
    score: float
    source: str
    rank: int
    strong: bool = False
    agree: bool = False


class ToolIndex:
    """BM25 and dense indexes over one catalog, searched together.

    Args:
        specs: the catalog (allowed tools only).
        embedder: ``None`` for lexical-only search.
        bar: fused z-score a tool must reach to be picked.
        strong_bar: fused z-score that makes a match strong enough for mid-session growth.
    """

    def __init__(
        self,
        specs: Sequence[ToolSpec],
        embedder: Any = None,
        *,
        progress: Progress | None = None,
        bar: float = 2.0,
        strong_bar: float = 2.5,
        min_picks: int = 3,
    ) -> None:
        self.specs = list(specs)
        self.names = [s.name for s in self.specs]
        self.embedder = embedder
        self.bar, self.strong_bar, self.min_picks = bar, strong_bar, min_picks
        self._position = {n: i for i, n in enumerate(self.names)}
        self.bundles = {s.name: s.bundle for s in self.specs}
        texts = [doc_text(s) for s in self.specs]
        self._bm25 = bm25s.BM25()
        self._bm25.index([terms(t) or ["_"] for t in texts], show_progress=False)
        self.doc_vectors = self._embed_docs(texts, progress) if embedder is not None else None

    def _embed_docs(self, texts: list[str], progress: Progress | None) -> NDArray[np.float32]:
        if hasattr(self.embedder, "embed_documents"):
            return np.asarray(self.embedder.embed_documents(texts, progress))
        vectors = np.asarray(self.embedder.embed(texts, "document"))
        if progress:
            progress(len(texts), len(texts))
        return vectors

    def lexical(self, query: str) -> NDArray[np.float64]:
        """BM25 scores of every tool for ``query``."""
        words = terms(query)
        if not words:
            return np.zeros(len(self.specs))
        return np.asarray(self._bm25.get_scores(words), dtype=np.float64)

    def dense(self, query: str, vector: NDArray[Any] | None = None) -> NDArray[np.float64]:
        """Cosine of every tool doc with the query (zeros when there is no embedder)."""
        if self.doc_vectors is None:
            return np.zeros(len(self.specs))
        if vector is None:
            vector = np.asarray(self.embedder.embed([query], "query"))[0]
        return np.asarray(self.doc_vectors @ vector, dtype=np.float64)

    def fused(self, query: str, vector: NDArray[Any] | None = None) -> tuple[Any, Any, Any]:
        """Calibrated fused scores, where the dense side beat BM25, and where both agree."""
        zl, zd = zscores(self.lexical(query)), zscores(self.dense(query, vector))
        if self.doc_vectors is None:
            none = np.zeros(len(self.specs), dtype=bool)
            return zl, none, none
        fused = LEXICAL_WEIGHT * zl + (1.0 - LEXICAL_WEIGHT) * zd
        return fused, zd >= zl, np.minimum(zl, zd) >= AGREE_Z

    def search(
        self, query: str, k: int = 10, method: str = "hybrid", vector: NDArray[Any] | None = None
    ) -> list[Hit]:
        """The ``k`` best tools for ``query`` by ``hybrid``, ``lexical`` or ``dense`` scores."""
        selected = _select_names(query, self.names)
        if selected is not None:
            return [Hit(n, 99.0, "select", i, True) for i, n in enumerate(selected)]
        query, required = _required_terms(query)
        n = len(self.specs)
        agree = np.zeros(n, dtype=bool)
        if method == "lexical":
            scores, dense_won = zscores(self.lexical(query)), np.zeros(n, dtype=bool)
        elif method == "dense":
            scores, dense_won = zscores(self.dense(query, vector)), np.ones(n, dtype=bool)
        else:
            scores, dense_won, agree = self.fused(query, vector)
        if required:
            scores = np.where(
                [all(t in n.lower() for t in required) for n in self.names], scores, -np.inf
            )
        top = np.argsort(-scores, kind="stable")[:k]
        return [
            Hit(
                self.names[i],
                float(scores[i]),
                "semantic" if dense_won[i] else "lexical",
                r,
                bool(scores[i] >= self.strong_bar),
                bool(agree[i]),
            )
            for r, i in enumerate(top)
            if np.isfinite(scores[i])
        ]

    def picks(
        self, query: str, max_tools: int = 16, vector: NDArray[Any] | None = None
    ) -> list[Hit]:
        """Tools clearing the bar (at least ``min_picks``), then bundle-mates of strong matches."""
        hits = self.search(query, max(max_tools, self.min_picks), vector=vector)
        chosen = [h for i, h in enumerate(hits) if h.score >= self.bar or i < self.min_picks]
        return self._with_mates(chosen, query, max_tools, vector)

    def _with_mates(self, chosen: list[Hit], query: str, max_tools: int, vector: Any) -> list[Hit]:
        bundles = {self.bundles[h.name] for h in chosen if h.strong and self.bundles.get(h.name)}
        if not bundles or len(chosen) >= max_tools:
            return chosen[:max_tools]
        scores, _, _ = self.fused(query, vector)
        have = {h.name for h in chosen}
        mates = [
            (float(scores[i]), n)
            for i, n in enumerate(self.names)
            if n not in have and self.bundles.get(n) in bundles and scores[i] >= self.bar / 3
        ]
        mates.sort(key=lambda m: -m[0])
        extra = [Hit(n, s, "bundle", len(chosen) + j) for j, (s, n) in enumerate(mates)]
        return (chosen + extra)[:max_tools]


def _select_names(query: str, names: Sequence[str]) -> list[str] | None:
    if not query.startswith("select:"):
        return None
    wanted = [w.strip() for w in query[len("select:") :].split(",") if w.strip()]
    known = set(names)
    return [w for w in wanted if w in known]


def _required_terms(query: str) -> tuple[str, list[str]]:
    required = [w[1:].lower() for w in query.split() if w.startswith("+") and len(w) > 1]
    rest = " ".join(w for w in query.split() if not w.startswith("+"))
    return rest or " ".join(required), required


def build_query(users: Sequence[str], mode: str = "current+previous") -> str:
    """The retrieval query from the user messages (assistant text is never included)."""
    if not users:
        return ""
    if mode == "current" or len(users) == 1:
        return users[-1]
    if mode == "all":
        return " ".join(users)
    return f"{users[-1]} {users[-2]}"
