"""Document vectors computed off the turn's path: one daemon thread per never-seen catalog.

Embedding a catalog is the only slow part of a first ``prepare`` (a MiniLM forward pass over
every tool's text); lexical selection needs none of it. A :class:`VectorJob` embeds the texts on
a thread (onnxruntime releases the GIL during the forward pass), writes them to the backing
store and hands them to ``on_ready``; until then selection answers lexically.

A cache that stages writes inside a call (the trinket's journal) names its backing store as
``.store``: the job writes there, in its own transactions, never into another thread's call.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from tooltray.memory.embedders.base import CachedEmbedder, DictCache, EmbeddingCache, Vectors

log = logging.getLogger("tooltray")


def backing(cache: EmbeddingCache) -> EmbeddingCache:
    """Where a background thread may write: ``cache.direct()`` or ``cache.store`` when the
    cache stages writes in a call, else ``cache`` itself."""
    direct = getattr(cache, "direct", None)
    if callable(direct):
        found: EmbeddingCache = direct()
        return found
    store = getattr(cache, "store", None)
    return store if store is not None else cache


class VectorJob:
    """Embed ``texts`` on a daemon thread; ``on_ready(vectors)`` runs on it when done.

    Args:
        embedder: computes and caches the vectors (its cache is replaced by :func:`backing`).
        texts: the documents, in index order.
        on_ready: receives the vectors (one row per text).

    Attributes:
        error: why the job failed (the index then stays lexical), else ``None``.
    """

    def __init__(
        self,
        embedder: CachedEmbedder,
        texts: Sequence[str],
        on_ready: Callable[[Vectors], None],
    ) -> None:
        self.embedder = CachedEmbedder(embedder.inner, backing(embedder.cache))
        self.texts = list(texts)
        self.on_ready = on_ready
        self.error: Exception | None = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name="tooltray-vectors", daemon=True)

    def start(self) -> VectorJob:
        """Start the thread; returns ``self``."""
        self.thread.start()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ends (or ``timeout`` seconds pass); True when it has ended."""
        return self.done.wait(timeout)

    def _run(self) -> None:
        try:
            vectors = self.embedder.embed_documents(self.texts)
        except Exception as exc:  # a worker must never die silently (EmbedderError or worse)
            self.error = exc
            log.error("tooltray: background embedding failed, selection stays lexical: %s", exc)
        else:
            self.on_ready(vectors)
        finally:
            self.done.set()


def as_cached(embedder: Any) -> CachedEmbedder:
    """``embedder`` behind the process memo (a bare one gets an in-memory cache)."""
    if isinstance(embedder, CachedEmbedder):
        return embedder
    return CachedEmbedder(embedder, DictCache())
