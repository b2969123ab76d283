"""Calibrated fusion of lexical and dense scores: why the bar is scale-free, and the weights.

Each retriever's scores for a query are standardised over the whole catalog (z-scores: how many
standard deviations a tool stands above the catalog for *this* query). A z-score does not change
under a positive affine map of the raw scores, so another embedder whose cosines all sit in
0.7-0.9, or a BM25 with other constants, moves no tool across the bar. The z-scores also weigh
each retriever by its confidence per query without a learnt weight: a retriever that sees one
clear match puts it many deviations out, one that sees nothing in particular stays flat.

A handful of scores says little about the spread, though: over two tools every z-score is +-1,
so a cosine gap of 0.01 outweighed a clear BM25 match (``mcp-server-time`` alone: "what is the
current time in Tokyo" ranked ``convert_time`` first). On catalogs under :data:`SMALL_CATALOG`
tools the spread is pooled with a prior, a quarter of the scores' own magnitude (unchanged by a
positive scale, though not by a shift), weighing as much as :data:`PRIOR_TOOLS` tools. Larger
catalogs keep the plain z-score, so every figure measured on them (70 tools and up) stands: the
prior pooled everywhere moved apibank's picks from 776.9 to 783.9 tokens.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.tuning import (
    DENSE_WEIGHT,
    LEXICAL_WEIGHT,
    PRIOR_SHARE,
    PRIOR_TOOLS,
    SMALL_CATALOG,
)

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
