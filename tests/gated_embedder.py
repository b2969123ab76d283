"""The real MiniLM behind a gate a test opens, and a trinket over an embedder of one's own.

While the gate is closed no document vector can exist, so a ``prepare`` that returns has not
waited for them (a lexical start); a subclass whose ``embed`` raises is an embedder that is down.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from typing import Any

from tooltray.memory.config import Settings
from tooltray.memory.core.catalog import AllowedCatalog
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.embedders import CachedEmbedder, DictCache, default_embedder
from tooltray.memory.retrieval import ToolIndex
from tooltray.memory.retrieval.selector import IndexSelector
from tooltray.memory.store import Store
from tooltray.tools.errors import EmbedderError
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec


class Gated:
    """MiniLM whose document embedding waits for ``gate``; counts query embeddings."""

    dim = 384

    def __init__(self, name: str | None = None) -> None:
        name = name or uuid.uuid4().hex
        self.id = f"minilm-gated-{name}"  # its own id: no vector of it is cached anywhere
        self.gate = threading.Event()
        self.queries = 0

    def embed(self, texts: Sequence[str], kind: Any = "document") -> Any:
        if kind == "query":
            self.queries += 1
        elif not self.gate.wait(600):  # a deadlock guard, not a timing assertion
            raise EmbedderError("the test never opened the gate")
        if kind == "document":  # the real vectors, the catalog embedded once a process
            return CachedEmbedder(default_embedder(), DictCache()).embed_documents(texts)
        return default_embedder().embed(texts, kind)


def trinket_over(registry: ToolRegistry, embedder: Any, settings: Settings) -> ToolLoaderTrinket:
    """A trinket on ``settings.db`` whose catalog is embedded by ``embedder`` (in a background
    thread where ``settings.embed_catalog`` says so); closing its store is the caller's."""
    assert settings.db, "a trinket over an embedder of one's own needs settings.db"
    store = Store(settings.db)
    background = settings.embed_catalog == "background"

    def factory(specs: Sequence[ToolSpec], s: Settings, cache: Any, progress: Any) -> Any:
        cached = CachedEmbedder(embedder, cache)
        index = ToolIndex(list(specs), cached, strict=True, background=background)
        return IndexSelector(index, index.embedder, s)

    planner = AllowedCatalog(registry, settings, store, selector=factory)
    return ToolLoaderTrinket(registry, store, settings=settings, catalog=planner)
