"""A ``load_tools`` query in the model's own words gives each server's best match a place before
any server's second tool.

Across servers, look-alikes do one job: for ``fetch web page as markdown`` six real servers list
a fetcher, and one server's two variants (``get_markdown``, ``get_markdown_summary``) took the
place of the reference ``fetch``. A query that repeats the turn's request is a fragment of the
task, whose words say which variant it needs: it keeps its ranking. Real servers' tool lists,
the real MiniLM.
"""

from __future__ import annotations

import pytest
from mcp_catalog import servers_catalog

from tooltray.memory.config import Settings
from tooltray.memory.retrieval.selector import IndexSelector, build_selector
from tooltray.memory.tuning import SEARCH_K

SERVERS = ("fetch", "fetch-typescript", "bycrawl", "ollama", "exa", "fetch2", "time", "git")
SPECS = [s for name in SERVERS for s in servers_catalog(name)]
SERVER_OF = {s.name: s.bundle for s in SPECS}
QUERY = "fetch web page as markdown"


@pytest.fixture(scope="module")
def selector() -> IndexSelector:
    return build_selector(SPECS, Settings(db="sqlite://", embed_catalog="wait"), None)


def _places(selector: IndexSelector, query: str, *request: str) -> list[str]:
    found = selector.search(query, context=request)
    return [c.name for c in found if not c.mention][:SEARCH_K]


@pytest.mark.parametrize("request_", ["", "What time is it in Tokyo? Then list my commits."])
def test_one_job_gets_one_place_per_server_first(selector: IndexSelector, request_: str) -> None:
    """Asked alone (a gateway's first search) or in a turn whose words it does not repeat."""
    ranked = [h.name for h in selector.index.picks(QUERY, 10)]
    assert ranked.index("get_markdown_summary") < ranked.index("fetch")  # the premise
    assert ranked.index("fetch") >= SEARCH_K  # by rank alone, fetch has no place
    places = _places(selector, QUERY, *filter(None, [request_]))
    assert "fetch" in places
    servers = [SERVER_OF[name] for name in places]
    assert len(set(servers)) == len(servers)


def test_a_query_repeating_the_request_keeps_its_ranking(selector: IndexSelector) -> None:
    """Half the query's words are the request's: the request's variant stays first, beside
    its server's other one."""
    request = "Get the page https://example.com/blog/post as markdown, then a short summary."
    places = _places(selector, QUERY, request)
    assert places[0] == "get_markdown_summary"
    assert [SERVER_OF[n] for n in places].count("fetch-typescript") >= 2
