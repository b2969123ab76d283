"""Tool retrieval: BM25 + dense vectors fused on catalog-calibrated scores, in bundles."""

from tooltray.memory.retrieval.index import Bundles, Hit, ToolIndex
from tooltray.memory.retrieval.scoring import (
    QUERY_MODES,
    Candidate,
    LexicalIndex,
    Query,
    build_query,
    doc_text,
    fuse,
    lexical_terms,
    parse_required,
    parse_select,
    segments,
    terms,
    tokenize_identifier,
    zscores,
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
