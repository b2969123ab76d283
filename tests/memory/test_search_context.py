"""A ``load_tools`` query asked in a turn is ranked with a share of the turn's request.

A model's query is often a fragment of its task (``list the papers found``), and among a
server's look-alike tools the request says which one the task needs. The real embedder and a
real SQLite store; the catalog's search asked directly, so the opening takes nothing first.
"""

from __future__ import annotations

from tooltray.memory.retrieval.selector import IndexSelector
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
