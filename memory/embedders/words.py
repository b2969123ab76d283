"""The words a request's meaning does not rest on, shared by both retrievers.

Function words, the when / where fillers of everyday requests ("tomorrow", "in here") and English
clitics (``it's``, ``user's``, ``don't``). BM25 drops them all from its terms; MiniLM drops the
fillers, the clitics and Lucene's stop list from a short query's forward pass. Left in, a lone
``s`` matched the one description with a possessive, and "tomorrow" pulled the tools whose texts
mention it above the calendar for a question about an agenda (``bench/README.md``, "Everyday
phrasing").
"""

from __future__ import annotations

import re

from bm25s.stopwords import STOPWORDS_EN

FILLERS = frozenset("today tomorrow tonight yesterday now here there up some".split())
"""When / where fillers: a tool that mentions "tomorrow" is no better a match for "what is on my
agenda tomorrow?"."""
STOPWORDS = FILLERS | frozenset(
    (
        "a an and are as at be by can for from get i in is it me my of on or please the this to "
        "with you your what which who how do does did"
    ).split()
)
"""BM25's stop words: function words and the fillers."""
QUERY_STOPWORDS = FILLERS | frozenset(STOPWORDS_EN)
"""What a short dense query drops: Lucene's English stop list and the fillers (question words
stay: "what is 17 times 23" without them read as a word count)."""
CLITIC = re.compile(r"(?i)(?<=[a-z])(?:n['\u2019]t|['\u2019](?:s|re|ll|ve|d|m))\b")
