"""Embedders: the protocol, one-thread cosine rows, and the store-backed cache of document vectors.

An embedder is a stable id, a dimension and ``embed(texts, kind)`` -> unit rows; ``kind`` lets an
asymmetric model (e5: ``query:`` vs ``passage:``) embed a message and a tool document differently.
Cosine rows run on the calling thread (``einsum``), because BLAS splits a large product over threads
that wait on onnxruntime's still-spinning workers. Document vectors are embedded once per
(embedder id, content hash) and kept in the store, since a large catalog takes minutes to embed on
a CPU; queries are never cached. The timings are in ``bench/README.md``.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

Kind = Literal["query", "document"]
Vectors = NDArray[np.float32]
Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` while a catalog's documents are embedded."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows ``(n, dim)``; names itself stably.

    ``id`` keys cached document vectors, so it must change whenever the vectors would (model,
    variant, server). Failures raise :class:`tooltray.tools.errors.EmbedderError`.
    """

    @property
    def id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> Vectors: ...


def normalise(matrix: NDArray[Any]) -> Vectors:
    """Rows scaled to unit length as float32 (all-zero rows stay zero)."""
    rows = np.asarray(matrix, dtype=np.float32)
    if rows.ndim == 1:
        rows = rows[None, :]
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: Vectors = (rows / np.maximum(norms, 1e-12)).astype(np.float32)
    return out


def empty(dim: int) -> Vectors:
    """A ``(0, dim)`` float32 matrix: what embedding no texts returns."""
    return np.zeros((0, dim), dtype=np.float32)


def dot_rows(matrix: NDArray[np.float32], vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    """``vectors @ matrix.T`` as ``(len(vectors), len(matrix))`` float32, one row at a time.

    Args:
        matrix: ``(n, d)`` rows (tool documents, past requests).
        vectors: ``(k, d)`` queries, or one ``(d,)`` query (then the result is ``(1, n)``).
    """
    queries = np.atleast_2d(np.asarray(vectors, np.float32))
    rows = np.ascontiguousarray(matrix, np.float32)
    out = np.empty((len(queries), len(rows)), np.float32)
    for k, query in enumerate(queries):
        np.einsum("ij,j->i", rows, query, out=out[k])
    return out


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

    def lookup_all(self, texts: Sequence[str]) -> Vectors | None:
        """Every text's vector from the memo or the cache, or ``None`` when one is missing.

        What a caller that must not wait asks first: a catalog seen before (by this process
        or any on the same store) is answered at once, a never-seen one is embedded elsewhere.
        """
        keys = [text_hash(t) for t in texts]
        found = self._lookup(keys)
        if any(k not in found for k in keys):
            return None
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
