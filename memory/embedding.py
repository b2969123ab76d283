"""Moved to :mod:`tooltray.memory.embedders`; this module keeps older imports working."""

from tooltray.memory.embedders import (
    MINILM_SHA256,
    CachedEmbedder,
    DictCache,
    Embedder,
    EmbeddingCache,
    Kind,
    MiniLMOnnxEmbedder,
    OpenAIEmbedder,
    Vectors,
    default_embedder,
    normalise,
)
from tooltray.memory.embedders.minilm import MAX_TOKENS

__all__ = [
    "MAX_TOKENS",
    "MINILM_SHA256",
    "CachedEmbedder",
    "DictCache",
    "Embedder",
    "EmbeddingCache",
    "Kind",
    "MiniLMOnnxEmbedder",
    "OpenAIEmbedder",
    "Vectors",
    "default_embedder",
    "normalise",
]
