"""The bridge between the trinket and retrieval: picks, strong picks and searches as Candidates.

It builds the embedder the settings name (cached document embeddings in the store), the hybrid
index over the allowed tools, and answers the three questions the planner asks: what to load at a
session boundary (``picks``), what a later turn may append (``strong``), and what a ``load_tools``
query means (``search``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from tooltray.memory.config import Settings
from tooltray.memory.embedding import CachedEmbedder, OpenAIEmbedder, default_embedder
from tooltray.memory.hybrid import ToolIndex, build_query
from tooltray.memory.selection import Candidate
from tooltray.tools.spec import ToolSpec

if TYPE_CHECKING:
    from tooltray.memory.skills import Skill, SkillLibrary
    from tooltray.memory.store import Store

Progress = Callable[[int, int], None]
SEARCH_K = 5
STRONG_K = 2
GROWTH_BAR = 2.5


class Retriever(Protocol):
    """What the planner needs from retrieval."""

    embedder: Any

    def picks(self, users: Sequence[str]) -> list[Candidate]: ...

    def strong(self, users: Sequence[str]) -> list[Candidate]: ...

    def search(self, query: str) -> list[Candidate]: ...

    def recall_skills(self, library: SkillLibrary, goal: str) -> list[Skill]: ...


def _source(hit: Any) -> str:
    source = str(hit.source)
    return {"bundle": "semantic", "select": "manual"}.get(source, source)


class IndexRetriever:
    """A :class:`Retriever` over ``tooltray.memory.retrieval.ToolIndex``."""

    def __init__(self, index: Any, embedder: Any, settings: Settings) -> None:
        self.index = index
        self.embedder = embedder
        self.settings = settings

    def _query(self, users: Sequence[str]) -> str:
        return build_query(list(users), mode=self.settings.query_mode)

    def picks(self, users: Sequence[str]) -> list[Candidate]:
        """Tools that clear the calibrated bar for the conversation, with bundle-mates."""
        hits = self.index.picks(self._query(users), max_tools=self.settings.max_tools)
        return [Candidate(h.name, _source(h), float(h.score)) for h in hits]

    def strong(self, users: Sequence[str]) -> list[Candidate]:
        """The current message's strongest matches only: later turns append rarely."""
        hits = self.index.picks(self._query(users[-1:]), max_tools=self.settings.max_tools)
        strong = [h for h in hits if h.agree and h.score >= GROWTH_BAR]
        return [Candidate(h.name, _source(h), float(h.score)) for h in strong[:STRONG_K]]

    def search(self, query: str) -> list[Candidate]:
        """The best matches for a ``load_tools`` query."""
        hits = self.index.picks(query, max_tools=SEARCH_K)
        return [Candidate(h.name, _source(h), float(h.score)) for h in hits]

    def recall_skills(self, library: SkillLibrary, goal: str) -> list[Skill]:
        """Skills matching ``goal``, with a bar set by the goal's cosines over the tool docs."""
        vectors = getattr(self.index, "doc_vectors", None)
        if vectors is None:
            return []
        return library.recall_skill(goal, np.asarray(vectors))


def make_embedder(settings: Settings, store: Store | None) -> Any:
    """The embedder the settings name, with document embeddings cached in ``store``."""
    inner: Any
    if settings.embedder == "openai":
        inner = OpenAIEmbedder(base_url=str(settings.embed_base_url), model=settings.embed_model)
    else:
        inner = default_embedder()
    return CachedEmbedder(inner, store) if store is not None else inner


def build_retriever(
    specs: Sequence[ToolSpec],
    settings: Settings,
    store: Store | None,
    progress: Progress | None = None,
) -> Retriever:
    """Embed the catalog (cached) and build the hybrid index; raises EmbedderError when down."""
    embedder = make_embedder(settings, store)
    index = ToolIndex(list(specs), embedder, progress=progress)
    return IndexRetriever(index, embedder, settings)
