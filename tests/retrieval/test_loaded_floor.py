"""A query in the model's own words whose best match is loaded answers with fresh tools only
where they are near it.

The best few fresh tools above the catalog mean are an answer when nothing better exists; when
the model already holds the query's best match, in a small catalog they are noise
(``get_current_time`` for ``fetch a web page`` with ``fetch`` loaded), and the answer it needs
is "Already loaded". A query that repeats the turn's request keeps the request's whole share,
and its other tasks' tools stay answers. Real servers' tool lists, the real MiniLM.
"""

from __future__ import annotations

import pytest
from mcp_catalog import servers_catalog

from tooltray.memory.config import Settings
from tooltray.memory.retrieval.selector import IndexSelector, build_selector
from tooltray.memory.tuning import BAR_RATIO

QUERY = "fetch a web page"
REQUEST = "What time is it in Tokyo? I need it for a meeting."


def _selector(*servers: str) -> IndexSelector:
    specs = [s for name in servers for s in servers_catalog(name)]
    return build_selector(specs, Settings(db="sqlite://", embed_catalog="wait"), None)


@pytest.fixture(scope="module")
def small() -> IndexSelector:
    return _selector("time", "fetch", "git")


def _tools(selector: IndexSelector, query: str, loaded: set[str], request: str) -> list[str]:
    found = selector.search(query, exclude=loaded, context=[request])
    return [c.name for c in found if not c.mention and c.name not in loaded]


def test_with_its_best_match_loaded_a_weak_fresh_tool_is_no_answer(small: IndexSelector) -> None:
    alone = [h.name for h in small.index.picks(QUERY, 5)]
    assert alone[0] == "fetch"  # the premise: fetch is the query's best match
    assert small.index.picks(QUERY, 5, exclude={"fetch"})  # the premise: weak ones clear the bar
    assert small.index.picks(QUERY, 5, exclude={"fetch"}, floor=True) == []
    assert _tools(small, QUERY, {"fetch"}, REQUEST) == []


def test_a_query_repeating_the_request_keeps_its_weaker_tools(small: IndexSelector) -> None:
    """Every word of the query is the request's: a fragment of the task, with no floor."""
    query = "time in Tokyo"
    assert _tools(small, query, {"get_current_time"}, REQUEST)  # convert_time still comes


def test_without_a_loaded_best_match_the_best_above_the_mean_still_answer(
    small: IndexSelector,
) -> None:
    """The floor is the loaded match's: with ``time``'s tools loaded instead, a query for a
    page still gets ``fetch`` (and whatever clears its own bar)."""
    hits = small.index.picks(QUERY, 5, exclude={"get_current_time", "convert_time"}, floor=True)
    assert hits and hits[0].name == "fetch"


def test_a_fresh_look_alike_near_the_loaded_match_still_comes() -> None:
    """Another server's fetcher scores near ``fetch``: it clears the loaded match's bar."""
    selector = _selector("time", "fetch", "fetch2", "git")
    scores = {h.name: h.score for h in selector.index.picks(QUERY, 20)}
    top = scores["fetch"]
    near = [n for n, s in scores.items() if n.startswith("fetch_") and s >= BAR_RATIO * top]
    assert near  # the premise: a look-alike within the bar
    fresh = _tools(selector, QUERY, {"fetch"}, REQUEST)
    assert fresh and fresh[0] in near
    assert all(n.startswith("fetch_") for n in fresh)  # its server's mates, nothing weaker
