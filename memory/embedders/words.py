"""The words a request's meaning does not rest on, shared by both retrievers.

Function words, the when / where fillers of everyday requests ("tomorrow", "in here") and English
clitics (``it's``, ``user's``, ``don't``). BM25 drops them from its terms and MiniLM from a short
query's forward pass: left in, a lone ``s`` matched the one description with a possessive, and
"tomorrow" pulled the one tool whose description mentions it to the top of a question about an
agenda (``bench/README.md``, "Everyday phrasing").
"""

from __future__ import annotations

import re

from bm25s.stopwords import STOPWORDS_EN

STOPWORDS = frozenset(
    (
        "a an and are as at be by can for from get i in is it me my of on or please the this to "
        "with you your what which who how do does did "
        "today tomorrow tonight yesterday now here there up some"
    ).split()
)
"""Function words and fillers: a tool that mentions "tomorrow" is no better a match for "what is
on my agenda tomorrow?"."""
QUERY_STOPWORDS = STOPWORDS | frozenset(STOPWORDS_EN)
"""What a dense query drops: :data:`STOPWORDS` and Lucene's English stop list."""
CLITIC = re.compile(r"(?i)(?<=[a-z])(?:n['\u2019]t|['\u2019](?:s|re|ll|ve|d|m))\b")
