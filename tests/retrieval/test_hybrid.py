"""Hybrid retrieval: identifiers, query forms, a scale-free bar, bundle-mates, no embedder."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from tooltray.memory.embedding import CachedEmbedder, default_embedder, normalise
from tooltray.memory.hybrid import ToolIndex, build_query, split_identifier, terms
from tooltray.tools.demo import load_demo_catalog


class DictCache:
    """An in-memory embedding cache (the store's two methods)."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], Any] = {}

    def get_embeddings(self, embedder_id: str, hashes: Any) -> dict[str, Any]:
        return {h: self.rows[(embedder_id, h)] for h in hashes if (embedder_id, h) in self.rows}

    def put_embeddings(self, embedder_id: str, vectors: Any) -> None:
        self.rows.update({(embedder_id, h): v for h, v in vectors.items()})


CACHE = DictCache()


@lru_cache(maxsize=4)
def _index(embedder: Any = None) -> ToolIndex:
    specs, _ = load_demo_catalog()
    inner = default_embedder() if embedder is None else embedder
    return ToolIndex(specs, CachedEmbedder(inner, CACHE))


def test_identifiers_split_on_separators_and_camel_case() -> None:
    assert split_identifier("getUserID_v2.list-items/x") == [
        "get",
        "user",
        "id",
        "v2",
        "list",
        "items",
        "x",
    ]
    assert "calendar" in terms("calendar_create_event please") and "please" not in terms("please")


def test_query_forms_select_and_required_name_term() -> None:
    index = _index()
    hits = index.search("select:git_push,nope,files_read", 5)
    assert [h.name for h in hits] == ["git_push", "files_read"] and hits[0].source == "select"
    hits = index.search("+email send a message to Dana", 5)
    assert hits and all("email" in h.name for h in hits)


def test_hybrid_finds_what_each_side_alone_misses() -> None:
    index = _index()
    names = [h.name for h in index.search("what will the weather be like in Lisbon next week", 3)]
    assert "weather_forecast" in names
    assert index.search("commit my changes and push the branch", 1)[0].name.startswith("git_")


class Squashed:
    """The same embedder with cosines squeezed: another model's scale, the same rankings."""

    id, dim = "squashed", 385

    def embed(self, texts: Any, kind: str = "document") -> Any:
        v = default_embedder().embed(texts, kind)
        shifted = np.hstack([0.3 * v, np.full((len(v), 1), 0.95, dtype=np.float32)])
        return normalise(shifted)


SQUASHED = Squashed()


def test_the_bar_does_not_depend_on_the_embedders_cosine_scale() -> None:
    plain, squashed = _index(), _index(SQUASHED)
    q = "find me a hotel in Lisbon under 180 a night with a gym"
    raw_p = plain.dense(q)
    raw_s = squashed.dense(q)
    assert raw_s.std() < raw_p.std() / 2 and raw_s.mean() > raw_p.mean() + 0.3
    assert [h.name for h in plain.picks(q, 16)] == [h.name for h in squashed.picks(q, 16)]


def test_bundle_mates_follow_strong_matches_only() -> None:
    index = _index()
    picks = index.picks("push my git branch to the remote", 16)
    assert any(h.source == "bundle" for h in picks)
    assert all(h.name.startswith("git_") for h in picks if h.source == "bundle")
    assert len(picks) <= 16


def test_without_an_embedder_search_is_lexical() -> None:
    specs, _ = load_demo_catalog()
    index = ToolIndex(specs, None)
    hits = index.search("send an email", 3)
    assert hits and all(h.source == "lexical" for h in hits)
    assert "email_send" in [h.name for h in hits]


def test_build_query_modes() -> None:
    users = ["first message", "second message", "third message"]
    assert build_query(users, "current") == "third message"
    assert build_query(users, "current+previous") == "third message second message"
    assert build_query(users, "all") == "first message second message third message"
    assert build_query([], "current") == ""
