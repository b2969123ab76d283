"""Embedders: the offline MiniLM ONNX default, OpenAI-compatible servers, a store-backed cache."""

from tooltray.memory.embedders.base import (
    CachedEmbedder,
    DictCache,
    Embedder,
    EmbeddingCache,
    Kind,
    Progress,
    Vectors,
    clear_memo,
    normalise,
    text_hash,
)
from tooltray.memory.embedders.minilm import MINILM_SHA256, MiniLMOnnxEmbedder, default_embedder
from tooltray.memory.embedders.openai_compat import OpenAIEmbedder

__all__ = [
    "MINILM_SHA256",
    "CachedEmbedder",
    "DictCache",
    "Embedder",
    "EmbeddingCache",
    "Kind",
    "MiniLMOnnxEmbedder",
    "OpenAIEmbedder",
    "Progress",
    "Vectors",
    "clear_memo",
    "default_embedder",
    "normalise",
    "text_hash",
]
