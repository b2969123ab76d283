"""BM25 (bm25s, Lucene variant, k1 1.5, b 0.75) over each tool's lexical terms.

BM25 is a sum over query terms, so the score of a whole message is exactly the sum of its
sentences' scores: each sentence is scored once and the whole comes for free.
"""

from __future__ import annotations

from collections.abc import Sequence

import bm25s
import numpy as np
from numpy.typing import NDArray

from tooltray.memory.retrieval.text import lexical_terms
from tooltray.tools.spec import ToolSpec

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
