"""Long queries drop stop words before the model sees them: less latency, no loss of recall.

A MiniLM forward pass costs about 3 ms plus 0.17 ms per word-piece on this 2-core machine, so a
150-character chat message (37 pieces, the bfcl_multiturn median) is most of a turn's selection
budget. Dropping Lucene's English stop list (33 words, as bm25s ships it) from queries of more than
``COMPACT_OVER`` pieces takes that median to 29 pieces: selection with the embedding at 1,000
tools measured p50 9.7 vs 10.9 ms and 11.7 vs 14.1 ms in two runs (``bench/run.py latency``,
compacted and whole alternating). It also helps the dense retriever on every dev corpus
(``bench/run.py retrieval``, dense R@10 / C@10):

==============  ===========  ===========  ===========  ===========  ===========
query pieces    bfcl         bfcl_mt      metatool     sealtools    toolbench
==============  ===========  ===========  ===========  ===========  ===========
all kept        89.0 / 87.3  86.5 / 79.3  81.9 / 77.4  83.0 / 58.4  72.0 / 55.3
over 24         89.3 / 87.7  87.7 / 80.2  82.5 / 78.3  84.0 / 61.0  73.5 / 57.7
over 0          89.2 / 87.6  87.8 / 80.2  83.1 / 78.9  84.2 / 61.1  73.5 / 57.7
==============  ===========  ===========  ===========  ===========  ===========

Compacting every query lifts dense metatool above hybrid (82.8 / 78.9), so short queries stay
whole. A 95-word list (pronouns, auxiliaries) saved 4 more pieces but lost 1.2 to 3.5 dense points
on sealtools and toolbench; dropping punctuation too lost 1.0 / 1.3 on toolbench. Tool documents are
never compacted, so cached document vectors stay valid.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from bm25s.stopwords import STOPWORDS_EN
from numpy.typing import NDArray

COMPACT_OVER = 24
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
