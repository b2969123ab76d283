"""A hybrid index over the demo catalog with the real MiniLM embedder (embedded once per run)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from tooltray.memory.embedders import CachedEmbedder, DictCache, default_embedder, normalise
from tooltray.memory.retrieval import ToolIndex
from tooltray.tools.demo import load_demo_catalog
from tooltray.tools.spec import ToolSpec

CACHE = DictCache()


def minilm(texts: Sequence[str], kind: Any = "document") -> Any:
    """Real MiniLM vectors, documents through the run's cache: a wrapper of the embedder
    (squashed, failing) re-uses the demo catalog's vectors instead of embedding it again."""
    if kind == "document":
        return CachedEmbedder(default_embedder(), CACHE).embed_documents(texts)
    return default_embedder().embed(texts, kind)


class Squashed:
    """MiniLM with a constant direction mixed in: every cosine becomes ``0.25 cos + 0.75``.

    Each vector is ``[0.5 v, 0.866]`` (unit length), so cosines are compressed four-fold and
    shifted up: the same ranking on another scale, like a different embedder's.
    """

    id = "minilm-squashed"
    dim = 385

    def embed(self, texts: Sequence[str], kind: Any = "document") -> Any:
        return self.squash(minilm(texts, kind))

    def embed_spans(self, text: str, spans: Any, kind: Any = "query") -> Any:
        return self.squash(default_embedder().embed_spans(text, spans, kind))

    @staticmethod
    def squash(vecs: Any) -> Any:
        extra = np.full((len(vecs), 1), np.sqrt(0.75), dtype=np.float32)
        return normalise(np.hstack([0.5 * vecs, extra]))


@pytest.fixture(scope="session")
def demo_specs() -> list[ToolSpec]:
    specs, _ = load_demo_catalog()
    return specs


@pytest.fixture(scope="session")
def demo_index(demo_specs: list[ToolSpec]) -> ToolIndex:
    return ToolIndex(demo_specs, default_embedder(), cache=CACHE)


@pytest.fixture(scope="session")
def squashed_index(demo_specs: list[ToolSpec]) -> ToolIndex:
    return ToolIndex(demo_specs, Squashed(), cache=CACHE)
