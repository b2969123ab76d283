"""A ``load_tools`` answer names the bundles of its next matches that the menu does not name.

Where the needed tool's server is neither in the answer nor in the menu, the model loads it
from that line instead of asking for every tool's directory. Hand-made values for the rule, the
real embedder and a real SQLite store for the path through the trinket.
"""

from __future__ import annotations

import pytest

from tooltray.memory.core.session import SessionState
from tooltray.memory.metatools.meta_tools import LOAD_TOOLS, LoadRequest, load_tools
from tooltray.memory.retrieval.scoring import Candidate
from tooltray.memory.store.records import empty_snapshot
from tooltray.memory.tuning import MENTION_BUNDLES
from tooltray.tools.registry import ToolRegistry

from .conftest import MakeTrinket
from .test_fallback_directory import catalog

BUNDLES_LINE = "\n- bundles: "


def _mentions(*bundles: str) -> list[Candidate]:
    return [Candidate(b, "semantic", 0.5, mention=True) for b in bundles]


@pytest.mark.no_embedder
def test_the_answer_names_off_menu_bundles_and_loads_none_of_them() -> None:
    registry = catalog(4, 3)
    state = SessionState("s", empty_snapshot("s"))
    found = [Candidate("srv0_tool1", "semantic", 1.0), *_mentions("srv1", "srv2", "srv3")]
    ask = LoadRequest(names=(), query="copies moves")
    out = load_tools(registry, state, ask, lambda q: found, hard_max=64, named={"srv2"})
    assert out.added == ["srv0_tool1"] and out.mentioned == ["srv1", "srv3"]
    assert out.text.endswith(f"{BUNDLES_LINE}srv1, srv3")
    assert {load.name for load in out.changes.loads} == {"srv0_tool1"}
    every = {"srv1", "srv2", "srv3"}  # the menu names them all: the answer is as it was
    quiet = load_tools(registry, state, ask, lambda q: found, hard_max=64, named=every)
    assert quiet.mentioned == [] and BUNDLES_LINE not in quiet.text


@pytest.mark.no_embedder
def test_at_most_mention_bundles_are_named_best_first() -> None:
    registry = catalog(12, 2)
    state = SessionState("s", empty_snapshot("s"))
    found = _mentions(*(f"srv{i}" for i in range(11, 0, -1)))
    ask = LoadRequest(names=(), query="renames")
    out = load_tools(registry, state, ask, lambda q: found, hard_max=64)
    assert out.mentioned == [f"srv{i}" for i in range(11, 11 - MENTION_BUNDLES, -1)]
    assert out.added == [] and out.text.startswith("Nothing matched")


def test_a_blind_client_gets_the_line_and_loads_a_named_bundle(make_trinket: MakeTrinket) -> None:
    """A client that never sees the menu (a gateway's) gets the next matches' bundles; loading
    one by its name loads its members. A bundle whose tools are all denied is never named."""
    registry = ToolRegistry(catalog(40, 6).allowed(), deny=[f"srv5_tool{i}" for i in range(6)])
    trinket = make_trinket(reg=registry)
    trinket.shows_menu = False
    answer = trinket.handle_meta("blind", LOAD_TOOLS, {"query": "renames copies moves"})
    line = answer.split(BUNDLES_LINE, 1)[1].splitlines()[0]
    named = line.split(", ")
    assert 0 < len(named) <= MENTION_BUNDLES and "srv5" not in named
    loaded = set(trinket.loaded("blind"))
    trinket.handle_meta("blind", LOAD_TOOLS, {"tools": [named[0]]})
    members = {f"{named[0]}_tool{i}" for i in range(6)}
    assert members <= set(trinket.loaded("blind")) and not members <= loaded
