"""Tool retrieval: BM25 + dense vectors fused on catalog-calibrated scores, in bundles."""

from tooltray.memory.retrieval.bundles import Bundles
from tooltray.memory.retrieval.candidates import Candidate
from tooltray.memory.retrieval.fusion import fuse, zscores
from tooltray.memory.retrieval.index import Hit, ToolIndex
from tooltray.memory.retrieval.lexical import LexicalIndex
from tooltray.memory.retrieval.query import (
    QUERY_MODES,
    Query,
    build_query,
    parse_required,
    parse_select,
)
from tooltray.memory.retrieval.text import (
    doc_text,
    lexical_terms,
    segments,
    terms,
    tokenize_identifier,
)

__all__ = [
    "QUERY_MODES",
    "Bundles",
    "Candidate",
    "Hit",
    "LexicalIndex",
    "Query",
    "ToolIndex",
    "build_query",
    "doc_text",
    "fuse",
    "lexical_terms",
    "parse_required",
    "parse_select",
    "segments",
    "terms",
    "tokenize_identifier",
    "zscores",
]
