"""Document vectors embedded once per (embedder id, content hash), kept in the store.

A catalog of thousands of tools takes minutes to embed on a CPU; with the cache a restarted
process, or a second session in the same one, embeds only tools it has never seen. Queries are
never cached: they are embedded fresh each time.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from tooltray.memory.embedders.base import Embedder, Kind, Progress, Vectors, empty

CHUNK = 256


class EmbeddingCache(Protocol):
    """Where document vectors are kept; :class:`tooltray.memory.store.Store` implements it."""

    def get_embeddings(self, embedder_id: str, hashes: Sequence[str]) -> Mapping[str, Any]: ...

    def put_embeddings(self, embedder_id: str, vectors: Mapping[str, Any]) -> None: ...


class DictCache:
    """An in-memory :class:`EmbeddingCache` (benches, tests, short-lived processes)."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], Any] = {}

    def get_embeddings(self, embedder_id: str, hashes: Sequence[str]) -> dict[str, Any]:
        """Cached vectors of the given hashes (missing ones absent)."""
        return {h: self.rows[(embedder_id, h)] for h in hashes if (embedder_id, h) in self.rows}

    def put_embeddings(self, embedder_id: str, vectors: Mapping[str, Any]) -> None:
        """Keep ``vectors`` (hash -> vector)."""
        self.rows.update({(embedder_id, h): np.asarray(v) for h, v in vectors.items()})


def text_hash(text: str) -> str:
    """The cache key of a document: sha256 of exactly the text that was embedded."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_MEMO: dict[str, dict[str, Any]] = {}
_memo_lock = threading.Lock()


class CachedEmbedder:
    """An embedder whose documents go through a process memo, then ``cache``, then ``inner``.

    Args:
        inner: the embedder that computes missing vectors.
        cache: where vectors persist (the store, or a :class:`DictCache`).
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache

    @property
    def id(self) -> str:
        """The inner embedder's id (cached vectors are the inner embedder's vectors)."""
        return self.inner.id

    @property
    def dim(self) -> int:
        """The inner embedder's dimension."""
        return self.inner.dim

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> Vectors:
        """Queries go straight to ``inner``; documents through the cache."""
        if kind == "query":
            return self.inner.embed(texts, "query")
        return self.embed_documents(texts)

    def embed_spans(
        self, text: str, spans: Sequence[tuple[int, int]], kind: Kind = "query"
    ) -> Vectors:
        """Whole text and span vectors in one pass when ``inner`` can, else one text each."""
        if hasattr(self.inner, "embed_spans"):
            return self.inner.embed_spans(text, spans, kind)  # type: ignore[no-any-return]
        return self.inner.embed([text, *(text[a:b] for a, b in spans)], kind)

    def embed_documents(self, texts: Sequence[str], progress: Progress | None = None) -> Vectors:
        """Embed documents, computing only unseen ones; reports ``progress(done, total)``."""
        keys = [text_hash(t) for t in texts]
        found = self._lookup(keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        for start in range(0, len(missing), CHUNK):
            chunk = missing[start : start + CHUNK]
            vecs = self.inner.embed([texts[i] for i in chunk], "document")
            fresh = {keys[i]: vecs[j] for j, i in enumerate(chunk)}
            self.cache.put_embeddings(self.inner.id, fresh)
            found.update(fresh)
            if progress is not None:
                progress(min(start + CHUNK, len(missing)), len(missing))
        with _memo_lock:
            _MEMO.setdefault(self.inner.id, {}).update(found)
        if not keys:
            return empty(self.dim)
        return np.stack([np.asarray(found[k], dtype=np.float32) for k in keys])

    def _lookup(self, keys: list[str]) -> dict[str, Any]:
        with _memo_lock:
            memo = _MEMO.get(self.inner.id, {})
            found = {k: memo[k] for k in keys if k in memo}
        unseen = [k for k in dict.fromkeys(keys) if k not in found]
        if unseen:
            found.update(self.cache.get_embeddings(self.inner.id, unseen))
        return found


def clear_memo() -> None:
    """Forget the process memo (tests; or after changing the store under a running process)."""
    with _memo_lock:
        _MEMO.clear()
