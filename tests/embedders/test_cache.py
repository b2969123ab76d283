"""Document vectors cached by (embedder id, text hash): in memory, and in a real SQLite store."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tooltray.memory.embedders import CachedEmbedder, DictCache, clear_memo, default_embedder
from tooltray.memory.store import Store


class Counting:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.inner = default_embedder()
        self.id, self.dim, self.seen = self.inner.id, self.inner.dim, 0

    def embed(self, texts: Sequence[str], kind: Any = "document") -> Any:
        self.seen += len(texts)
        return self.inner.embed(texts, kind)


DOCS = [f"tool number {i} does thing {i}" for i in range(5)]


def test_the_store_keeps_vectors_across_processes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    first = Counting()
    done: list[tuple[int, int]] = []
    vecs = CachedEmbedder(first, Store(url)).embed_documents(DOCS, lambda d, t: done.append((d, t)))
    assert first.seen == 5 and done[-1] == (5, 5)
    clear_memo()  # a new process has an empty memo
    second = Counting()
    again = CachedEmbedder(second, Store(url)).embed_documents([*DOCS, "a new one"])
    assert second.seen == 1 and np.allclose(again[:5], vecs, atol=1e-6)


def test_queries_are_never_cached_and_the_memo_spares_the_store() -> None:
    clear_memo()
    inner, cache = Counting(), DictCache()
    cached = CachedEmbedder(inner, cache)
    cached.embed(DOCS[:2], "document")
    cache.rows.clear()  # the process memo still has them
    cached.embed(DOCS[:2], "document")
    cached.embed(["a query"], "query")
    cached.embed(["a query"], "query")
    assert inner.seen == 2 + 2
    assert cached.id == inner.id and cached.dim == 384
