"""Calibrated fusion of lexical and dense scores: why the bar is scale-free, and the weights.

Each retriever's scores for a query are standardised over the whole catalog (z-scores: how many
standard deviations a tool stands above the catalog for *this* query). A z-score does not change
under a positive affine map of the raw scores, so another embedder whose cosines all sit in
0.7-0.9, or a BM25 with other constants, moves no tool across the bar. The z-scores also weigh
each retriever by its confidence per query without a learnt weight: a retriever that sees one
clear match puts it many deviations out, one that sees nothing in particular stays flat.

The weights are fixed (0.4 lexical, 0.6 dense): rank fusions (which throw away how far a match
stands out) and per-query weights (which trust a BM25 peak that is often one rare word) lost on at
least four of the five dev corpora; the measurements are in ``bench/README.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.tuning import DENSE_WEIGHT, LEXICAL_WEIGHT

Matrix = NDArray[np.float64]


def zscores(scores: NDArray[Any]) -> Matrix:
    """Each row standardised over its columns (rows without spread become zeros)."""
    s = np.asarray(scores, dtype=np.float64)
    flat = s.ndim == 1
    rows = s[None, :] if flat else s
    mean = rows.mean(axis=1, keepdims=True)
    std = rows.std(axis=1, keepdims=True)
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
