"""ToolIndex on the demo catalog with the real embedder: forms, fusion, scale, degradation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from tooltray.memory.embedders import CachedEmbedder, DictCache, default_embedder
from tooltray.memory.retrieval import Query, ToolIndex
from tooltray.tools.errors import EmbedderError
from tooltray.tools.spec import ToolSpec


def names(hits: Sequence[Any]) -> list[str]:
    return [h.name for h in hits]


def test_select_returns_exactly_the_named_known_tools(demo_index: ToolIndex) -> None:
    hits = demo_index.search("select:git_push,nope,files_read,git_push", 5)
    assert names(hits) == ["git_push", "files_read"]
    assert all(h.source == "select" for h in hits)
    assert names(demo_index.picks("select:weather_current")) == ["weather_current"]


def test_a_plus_term_must_be_in_the_name(demo_index: ToolIndex) -> None:
    hits = demo_index.search("+email send a message to Dana", 5)
    assert len(hits) == 5 and all("email" in h.name for h in hits)
    assert hits[0].name == "email_send"
    plain = names(demo_index.search("send a message to Dana", 5))
    assert any("email" not in n for n in plain)


def test_methods_and_the_hybrid_ranking(demo_index: ToolIndex) -> None:
    query = "what's it like outside in Oslo right now, will I need an umbrella"
    assert demo_index.search(query, 1, "dense")[0].name.startswith("weather")
    top = demo_index.search(query, 3)
    assert top[0].name.startswith("weather") and [h.rank for h in top] == [0, 1, 2]
    assert top[0].score >= top[1].score >= top[2].score
    lexical = demo_index.search("git_push", 1, "lexical")[0]
    assert lexical.name == "git_push" and lexical.source == "lexical"


def test_each_request_in_a_message_gets_its_tools(demo_index: ToolIndex) -> None:
    query = (
        "Find the cheapest flight from Berlin to Rome next Friday. "
        "After that, commit my staged changes with the message 'fix typo'."
    )
    picked = names(demo_index.picks(query, 8))
    assert any(n.startswith("travel") for n in picked) and "git_commit" in picked
    assert len(picked) <= 8 and picked == names(demo_index.picks(query, 8))


def test_picks_are_relative_to_the_best_match(demo_index: ToolIndex) -> None:
    hits = demo_index.picks("push my git branch to the remote", 16)
    assert hits[0].name == "git_push" and hits[0].strong
    assert 3 <= len(hits) <= 16 and all(h.score > 0 for h in hits)
    assert all(h.name.startswith("git") for h in hits if h.source != "bundle")
    assert demo_index.picks("push my git branch", 0) == []


def test_the_bar_does_not_depend_on_the_cosine_scale(
    demo_index: ToolIndex, squashed_index: ToolIndex
) -> None:
    assert squashed_index.doc_vectors is not None and demo_index.doc_vectors is not None
    plain_cos = demo_index.doc_vectors[:20] @ demo_index.doc_vectors[0]
    squashed_cos = squashed_index.doc_vectors[:20] @ squashed_index.doc_vectors[0]
    assert squashed_cos.min() > 0.7 > plain_cos.min()  # a visibly different scale
    for query in (
        "push my git branch to the remote",
        "what is the weather in Paris? Then convert 10 USD to EUR.",
        "remind me to call mum tomorrow at noon",
    ):
        plain = {h.name: h.score for h in demo_index.picks(query)}
        squashed = {h.name: h.score for h in squashed_index.picks(query)}
        assert plain.keys() == squashed.keys()  # order may differ only between near-ties
        assert all(abs(plain[n] - squashed[n]) < 1e-3 for n in plain)


def test_a_precomputed_query_vector_gives_the_same_result(demo_index: ToolIndex) -> None:
    query = "Archive the old invoices. Then email Dana the summary."
    vectors = demo_index.embed_query(query)
    assert vectors is not None and vectors.shape == (len(demo_index.query_texts(query)), 384)
    assert names(demo_index.picks(query, query_vector=vectors)) == names(demo_index.picks(query))
    one = demo_index.search(query, 5, query_vector=vectors[0])
    assert len(one) == 5


def test_messages_become_a_query(demo_index: ToolIndex) -> None:
    long = "create a calendar event for the team offsite next Thursday at ten"
    assert names(demo_index.picks([long, "ok do it"])) == names(
        demo_index.picks(Query("ok do it", long, 0.5))
    )


class Down:
    """An embedder whose server is down (raises the real error type on every call)."""

    id, dim = "down", 384

    def __init__(self, fail_docs: bool) -> None:
        self.fail_docs = fail_docs

    def embed(self, texts: Sequence[str], kind: Any = "document") -> Any:
        if kind == "document" and not self.fail_docs:
            return CachedEmbedder(default_embedder(), DictCache()).embed_documents(texts)
        raise EmbedderError("embedding server at http://127.0.0.1:9 is down: start it")


@pytest.mark.parametrize("fail_docs", [True, False])
def test_a_failing_embedder_degrades_to_lexical(
    demo_specs: list[ToolSpec], fail_docs: bool
) -> None:
    index = ToolIndex(demo_specs, Down(fail_docs))
    assert (index.degraded is not None) == fail_docs
    hits = index.picks("push my git branch to the remote")
    assert hits[0].name == "git_push" and all(h.source != "semantic" for h in hits)
    assert index.degraded is not None and "down" in index.degraded and not index.dense_ready
    lexical = ToolIndex(demo_specs)
    assert names(hits) == names(lexical.picks("push my git branch to the remote"))


def test_strict_raises_instead(demo_specs: list[ToolSpec]) -> None:
    with pytest.raises(EmbedderError, match="down"):
        ToolIndex(demo_specs, Down(True), strict=True)
    index = ToolIndex(demo_specs, Down(False), strict=True)
    with pytest.raises(EmbedderError):
        index.picks("push my branch")
