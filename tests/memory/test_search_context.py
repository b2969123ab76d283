"""A ``load_tools`` query asked in a turn is ranked with a share of the turn's request.

A model's query is often a fragment of its task (``list the papers found``), and among a
server's look-alike tools the request says which one the task needs; a query in the model's
own words takes none of it (the request joins by the share of the query's words it holds).
The real embedder and a real SQLite store; the catalog's search asked directly, so the opening
takes nothing first.
"""

from __future__ import annotations

from mcp_catalog import servers_catalog

from tooltray.memory.config import Settings
from tooltray.memory.retrieval.selector import IndexSelector, build_selector
from tooltray.memory.tuning import SEARCH_K, TIE_K
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec

from .conftest import MakeTrinket

SOURCES = (
    "arxiv", "pubmed", "biorxiv", "medrxiv", "google_scholar", "iacr", "semantic_scholar",
    "crossref", "dblp", "doaj", "openaire", "core", "europepmc", "pmc",
)  # fmt: skip
NEEDED = "papers_search_pubmed"
QUERY = "list the papers found"
REQUEST = "Find PubMed papers on why melanoma with BRAF V600E resists treatment, then list them."


def papers() -> ToolRegistry:
    """One server of look-alikes: a search per source, differing in the source's name only."""
    specs = [
        ToolSpec(
            name=f"papers_search_{source}",
            bundle="papers",
            description=f"Search academic papers from {source.replace('_', ' ')}.",
        )
        for source in SOURCES
    ]
    return ToolRegistry(specs)


def test_the_turns_request_picks_the_look_alike_the_task_needs(
    make_trinket: MakeTrinket,
) -> None:
    catalog = make_trinket(reg=papers(), learn="off").catalog
    assert isinstance(catalog.selector(), IndexSelector)
    alone = [c.name for c in catalog.search(QUERY, (), ("cold", []))]
    assert NEEDED not in alone and len(alone) <= SEARCH_K + TIE_K  # a fragment: a guess
    asked = [c.name for c in catalog.search(QUERY, (), ("in-turn", [REQUEST]))]
    assert NEEDED in asked[:SEARCH_K]


def test_a_query_in_the_models_own_words_is_answered_as_if_asked_alone() -> None:
    """Real servers' tool lists, the real MiniLM: the request's "read ... html" pulled another
    server's text fetchers into an answer to a query that shares no word with it (stop 52)."""
    specs = servers_catalog("fetch", "fetch2", "bycrawl", "amap-maps", "google-maps", "time")
    selector = build_selector(specs, Settings(db="sqlite://", embed_catalog="wait"), None)
    request = (
        "First read https://wiki.example.com/notes/q1.html, the notes my team left. "
        "Which city is at the longitude and latitude of (104.07, 30.66)?"
    )
    query = "fetch a web page URL and return its content"
    alone = [c.name for c in selector.search(query)]
    assert [c.name for c in selector.search(query, context=[request])] == alone
    assert "fetch" in alone


def test_a_follow_up_said_again_keeps_the_request() -> None:
    """A model that searches with the user's latest message (a follow-up sharing one word with
    the request) still asks within the task: its words are the turn's, so the request joins at
    its full share. The look-alikes among eleven real servers' tools, the real MiniLM."""
    servers = ("fetch", "time", "git", "filesystem", "amap-maps", "calculator", "excel")
    specs = papers().all_tools() + servers_catalog(*servers, "docker", "discord", "asana", "airbnb")
    selector = build_selector(specs, Settings(db="sqlite://", embed_catalog="wait"), None)
    follow = "show me the papers you got"
    alone = [c.name for c in selector.search(follow)]
    assert NEEDED not in alone[:SEARCH_K]  # the premise: the follow-up alone does not say
    assert selector.search(follow, context=[REQUEST, follow])[0].name == NEEDED
