"""Deterministic top-k: score, then priority, then tags named in the query, then catalog order."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.retrieval.text import terms
from tooltray.tools.spec import ToolSpec


class TieBreak:
    """Ranks tools by score with ties broken by ``priority`` and tag matches, never by chance.

    Args:
        specs: the catalog, in index order.
    """

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        self.priority = np.array([s.priority for s in specs], dtype=np.float64)
        self.tags = [frozenset(t for tag in s.tags for t in terms(tag)) for s in specs]
        self.any_tags = any(self.tags)

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
        words = set(terms(query)) if self.any_tags else set()
        tag_hits = np.array([len(self.tags[i] & words) for i in idx], dtype=np.float64)
        order = np.lexsort((idx, -tag_hits, -self.priority[idx], -scores[idx]))
        return [int(i) for i in idx[order][:k]]
