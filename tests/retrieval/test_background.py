"""A never-seen catalog: the first prepare selects lexically at once, a thread embeds it.

The embedder is the real MiniLM behind a gate the test opens: while it is closed no document
vector can exist, so a ``prepare`` that returns has not waited for them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gated_embedder import Gated, trinket_over

from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.embedders import (
    clear_memo,
    default_embedder,
    text_hash,
)
from tooltray.memory.retrieval import ToolIndex, doc_text
from tooltray.memory.retrieval.selector import IndexSelector
from tooltray.memory.store import Store
from tooltray.tools.demo import load_demo_catalog
from tooltray.tools.errors import EmbedderError
from tooltray.tools.registry import ToolRegistry

TRIP = "Find me flights from Boston to Lisbon on Nov 10 and a hotel there under 180 a night."
CODE = "The parse_range test is failing: read src/dates.py and fix the off-by-one bug."


def _trinket(url: str, registry: ToolRegistry, gated: Gated) -> ToolLoaderTrinket:
    settings = Settings(db=url, embed_catalog="background", max_tools=8, opening="share")
    return trinket_over(registry, gated, settings)


def _index(trinket: ToolLoaderTrinket) -> ToolIndex:
    selector = trinket.catalog.selector()
    assert isinstance(selector, IndexSelector)
    return selector.index


def _picked(trinket: ToolLoaderTrinket, sid: str) -> list[str]:
    loaded = trinket.state(sid).snapshot.loaded
    return [t.name for t in loaded if t.source not in ("core", "pinned")]


def test_first_prepare_is_lexical_then_vectors_join_and_persist(tmp_path: Path) -> None:
    specs, bundles = load_demo_catalog()
    registry = ToolRegistry(specs, bundles=bundles)
    url = f"sqlite:///{tmp_path / 'bg.db'}"
    gated = Gated(uuid.uuid4().hex)
    trinket = _trinket(url, registry, gated)

    trinket.prepare("s1", [{"role": "user", "content": TRIP}])  # returns with the gate closed
    index = _index(trinket)
    assert not index.dense_ready and index.job is not None and not index.job.done.is_set()
    assert gated.queries == 0  # no query was embedded: the selection was lexical
    assert "travel_search_flights" in _picked(trinket, "s1")

    gated.gate.set()
    assert index.wait_for_vectors()
    hashes = [text_hash(doc_text(s)) for s in index.specs]
    stored = Store(url).get_embeddings(gated.id, hashes)
    assert len(stored) == len(hashes)  # the worker filled the store
    expected = default_embedder().embed([doc_text(index.specs[0])], "document")[0]
    assert np.allclose(stored[hashes[0]], expected, atol=1e-5)

    trinket.prepare("s2", [{"role": "user", "content": CODE}])
    assert gated.queries > 0  # the later session scored densely
    assert "files_read" in _picked(trinket, "s2")


def test_a_later_process_reads_the_vectors_and_starts_no_worker(tmp_path: Path) -> None:
    specs, bundles = load_demo_catalog()
    registry = ToolRegistry(specs, bundles=bundles)
    url = f"sqlite:///{tmp_path / 'bg.db'}"
    name = uuid.uuid4().hex
    first = Gated(name)
    first.gate.set()
    assert _index(_trinket(url, registry, first)).wait_for_vectors()
    clear_memo()

    later = Gated(name)  # the same embedder id, its gate closed: it can embed no document
    trinket = _trinket(url, registry, later)
    trinket.prepare("s1", [{"role": "user", "content": TRIP}])
    index = _index(trinket)
    assert index.dense_ready and index.job is None and later.queries > 0


def test_a_failing_worker_leaves_search_lexical(tmp_path: Path) -> None:
    specs, _ = load_demo_catalog()

    class Broken(Gated):
        def embed(self, texts: Sequence[str], kind: Any = "document") -> Any:
            raise EmbedderError("model file damaged")

    broken = Broken(uuid.uuid4().hex)
    index = ToolIndex(specs, broken, background=True)
    assert not index.wait_for_vectors()
    assert index.job is not None and "damaged" in str(index.job.error)
    assert index.picks("find flights to Lisbon", 5)  # lexical answers still come


def test_an_in_memory_store_embeds_its_catalog_in_the_foreground(caplog: Any) -> None:
    """In-memory SQLite serves every thread on one connection: a background read failed inside
    the turn's transaction and left selection lexical for good. It embeds before the first
    selection instead, and nothing degrades."""
    specs, bundles = load_demo_catalog()
    registry = ToolRegistry(specs, bundles=bundles)
    settings = Settings(db="sqlite://", embed_catalog="background")
    level = caplog.at_level("WARNING", logger="tooltray")
    with level, ToolLoaderTrinket(registry, settings=settings) as trinket:
        view = trinket.prepare(f"mem-{uuid.uuid4().hex[:8]}", [{"role": "user", "content": TRIP}])
        index = _index(trinket)
        assert view.mode == "selected" and index.doc_vectors is not None
        assert index.degraded is None
    assert not [r for r in caplog.records if "background" in r.getMessage()], caplog.text
