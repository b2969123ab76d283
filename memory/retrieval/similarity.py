"""Pairwise cosine of tool documents, calibrated against the catalog's own distribution.

A raw cosine of 0.8 means little on its own: MiniLM puts every pair of a narrow catalog high.
Like the retrieval bar, a pair counts by its z-score against all pairs of the same catalog.
Products run in row blocks, so 4k tools never hold a 4k x 4k matrix at once.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.retrieval.scoring import doc_text, tokenize_identifier
from tooltray.tools.names import match_key
from tooltray.tools.spec import ToolSpec

BLOCK = 512
STATS_ROWS = 1024  # rows sampled for the distribution in larger catalogs

Matrix = NDArray[np.float32]


def unit_vectors(tools: Sequence[ToolSpec], embedder: Any) -> Matrix:
    """The retrieval documents of ``tools`` embedded and normalised to unit length."""
    texts = [doc_text(spec) for spec in tools]
    if hasattr(embedder, "embed_documents"):
        raw = embedder.embed_documents(texts)
    else:
        raw = embedder.embed(texts, "document")
    vectors = np.asarray(raw, np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.maximum(norms, 1e-12), np.float32)


def cosine_stats(vectors: Matrix) -> tuple[float, float]:
    """Mean and standard deviation of the cosine over distinct pairs (sampled rows if large)."""
    n = len(vectors)
    if n < 3:
        return 0.0, 1.0
    rows = np.arange(n) if n <= STATS_ROWS else np.linspace(0, n - 1, STATS_ROWS).astype(int)
    total = square = 0.0
    count = 0
    for start in range(0, len(rows), BLOCK):
        block = rows[start : start + BLOCK]
        sims = (vectors[block] @ vectors.T).astype(np.float64)
        sims[np.arange(len(block)), block] = np.nan
        total += float(np.nansum(sims))
        square += float(np.nansum(sims * sims))
        count += sims.size - len(block)
    mean = total / count
    return mean, max(float(np.sqrt(max(square / count - mean * mean, 0.0))), 1e-6)


def close_pairs(vectors: Matrix, cut: float, rows: Sequence[int] | None = None) -> list[Any]:
    """``(i, j, cosine)`` for distinct pairs at or above ``cut`` (``i`` among ``rows``)."""
    picked = np.arange(len(vectors)) if rows is None else np.asarray(rows, dtype=int)
    own = set(picked.tolist())
    out = []
    for start in range(0, len(picked), BLOCK):
        block = picked[start : start + BLOCK]
        sims = vectors[block] @ vectors.T
        for r, j in zip(*np.nonzero(sims >= cut), strict=True):
            i = int(block[r])
            if i != j and (i < j or int(j) not in own):
                out.append((i, int(j), float(sims[r, j])))
    return out


def name_similarity(a: str, b: str) -> float:
    """difflib ratio of the two names' words after the leading words they share.

    MCP/server prefixes go first, then shared leading words (a bundle prefix such as ``files_``
    makes ``files_copy`` and ``files_edit`` look alike without saying anything about them).
    """
    left, right = tokenize_identifier(match_key(a)), tokenize_identifier(match_key(b))
    while left and right and left[0] == right[0] and len(left) + len(right) > 2:
        left, right = left[1:], right[1:]
    return difflib.SequenceMatcher(None, " ".join(left), " ".join(right)).ratio()
