"""Long queries drop stop words before the model sees them: less latency, no loss of recall.

A MiniLM forward pass costs a fixed part plus a part per word-piece, so a long chat message is
most of a turn's selection budget. Queries of more than ``COMPACT_OVER`` pieces drop Lucene's
English stop list (33 words, as bm25s ships it); this also helps the dense retriever on every dev
corpus. Compacting every query lifts dense metatool above hybrid, so short queries stay whole; a
longer stop list and dropping punctuation cost dense recall. Tool documents are never compacted,
so cached document vectors stay valid. The figures are in ``bench/README.md`` ("Tuned values":
query compaction).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from bm25s.stopwords import STOPWORDS_EN
from numpy.typing import NDArray

from tooltray.memory.tuning import COMPACT_OVER

STOPWORDS = frozenset(STOPWORDS_EN)


def content_mask(text: str, encoding: Any, over: int | None = COMPACT_OVER) -> NDArray[np.bool_]:
    """Which tokens of ``encoding`` (a ``tokenizers.Encoding`` of ``text``) reach the model.

    Every token when ``over`` is None or the text has at most ``over`` word-pieces; otherwise
    every token but those of stop words (special tokens always stay). A text of nothing but stop
    words keeps them all.
    """
    keep = np.ones(len(encoding.ids), dtype=bool)
    if over is None or sum(encoding.attention_mask) - 2 <= over:
        return keep
    for i, word in enumerate(encoding.word_ids):
        if word is not None:
            start, end = encoding.word_to_chars(word)
            keep[i] = text[start:end].lower() not in STOPWORDS
    return keep if keep.sum() > 2 else np.ones_like(keep)
