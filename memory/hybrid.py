"""Moved to :mod:`tooltray.memory.retrieval`; this module keeps older imports working."""

from tooltray.memory.retrieval import Hit, ToolIndex, build_query, doc_text, terms, zscores
from tooltray.memory.retrieval.fusion import LEXICAL_WEIGHT
from tooltray.memory.retrieval.index import AGREE_Z
from tooltray.memory.retrieval.text import STOPWORDS
from tooltray.memory.retrieval.text import tokenize_identifier as split_identifier

__all__ = [
    "AGREE_Z",
    "LEXICAL_WEIGHT",
    "STOPWORDS",
    "Hit",
    "ToolIndex",
    "build_query",
    "doc_text",
    "split_identifier",
    "terms",
    "zscores",
]
