"""``load_tools(["*"])`` on a catalog too large to list: every tool's name instead, priced."""

from __future__ import annotations

import pytest

from tooltray.memory.config import Settings
from tooltray.memory.core.catalog import AllowedCatalog
from tooltray.memory.core.policy import LATENCY, PRICE, PROFILES, lists_everything
from tooltray.memory.core.session import SessionState
from tooltray.memory.metatools.meta_tools import (
    LOAD_TOOLS,
    LoadRequest,
    directory,
    load_tools,
)
from tooltray.memory.retrieval.scoring import Candidate
from tooltray.memory.store.records import LoadedTool, SessionSnapshot
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec

from .conftest import MakeTrinket

WORDS = "reads writes lists deletes renames copies moves searches exports imports".split()


def catalog(servers: int, tools: int) -> ToolRegistry:
    """``servers`` bundles of ``tools`` tools each, described in a long sentence (MCP-like)."""
    specs = []
    for s in range(servers):
        for t in range(tools):
            words = " ".join(WORDS[(s + t + k) % len(WORDS)] for k in range(30))
            params = {"type": "object", "properties": {"path": {"type": "string"}}}
            name = f"srv{s}_tool{t}"
            specs.append(
                ToolSpec(name=name, description=words, parameters=params, bundle=f"srv{s}")
            )
    return ToolRegistry(specs)


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_a_listing_that_costs_more_than_a_round_trip_by_name_gives_way(profile: object) -> None:
    assert profile in (PRICE, LATENCY)
    assert lists_everything(300, 60, profile)  # a few tools: list them, no extra trip
    assert not lists_everything(55_000, 12_000, profile)  # 1,300 MCP tools: names
    # the boundary lies where the listing outgrows the directory by about one round trip
    cuts = [n for n in range(100, 20_000, 100) if not lists_everything(n, 100, profile)]
    assert cuts and all(not lists_everything(n, 100, profile) for n in range(cuts[0], 20_000, 500))


def test_the_directory_names_every_allowed_tool_by_bundle() -> None:
    specs = [
        ToolSpec(name="git_status", description="Status.", bundle="git"),
        ToolSpec(name="git_log", description="Log.", bundle="git"),
        ToolSpec(name="fetch_page", description="Fetch.", bundle="fetch"),
        ToolSpec(name="secret_dump", description="Dump.", bundle="fetch"),
        ToolSpec(name="calculator", description="Add."),
    ]
    registry = ToolRegistry(specs, deny=["secret_dump"])
    text = directory(registry)
    lines = text.splitlines()
    assert "(4)" in lines[0] and "load_tools" in lines[0]
    assert "- git: git_status, git_log" in lines
    assert "- fetch: fetch_page" in lines
    assert lines[-1] == "- (no bundle): calculator"
    assert "secret_dump" not in text


@pytest.mark.parametrize("cost_profile", ["price", "latency"])
def test_the_planner_prices_the_fallback_per_catalog(cost_profile: str) -> None:
    big, small = catalog(20, 12), catalog(2, 3)
    for path in ("openai", "text"):
        settings = Settings(db="sqlite://", path=path, cost_profile=cost_profile)
        assert AllowedCatalog(big, settings).fallback_answer() != "listing"
        assert AllowedCatalog(small, settings).fallback_answer() == "listing"


def test_a_large_catalog_answers_every_tool_with_names_then_loads_by_name(
    make_trinket: MakeTrinket,
) -> None:
    registry = catalog(4, 60)  # a few large bundles: a bundle would bring 60 listings
    trinket = make_trinket(reg=registry, path="text")
    before = set(trinket.loaded("big"))
    answer = trinket.handle_meta("big", LOAD_TOOLS, {"tools": ["*"]})
    assert answer.startswith("Too many tools") and "- srv2: srv2_tool0, srv2_tool1" in answer
    assert set(trinket.loaded("big")) == before  # nothing callable that the model has not seen
    loaded = trinket.handle_meta("big", LOAD_TOOLS, {"tools": ["srv2_tool3"]})
    assert "srv2_tool3" in loaded and "srv2_tool3" in trinket.loaded("big")
    # the fallback tool promises every tool callable, and keeps that promise
    trinket.handle_meta("big", "fallback", {})
    assert len(trinket.loaded("big")) >= len(registry.allowed())


def test_a_small_catalog_still_lists_every_tool(make_trinket: MakeTrinket) -> None:
    registry = catalog(2, 3)
    trinket = make_trinket(reg=registry, path="text")
    answer = trinket.handle_meta("small", LOAD_TOOLS, {"tools": ["*"]})
    assert "this turn only" in answer
    assert {s.name for s in registry.allowed()} <= set(trinket.loaded("small"))


def test_a_full_set_names_a_refused_bundle_and_a_tool_named_alone_loads(
    make_trinket: MakeTrinket,
) -> None:
    """At ``hard_max_tools`` a bundle is refused with its members' names, and the one the model
    then names alone loads past the cap: no directory needed, nothing unloaded."""
    registry = catalog(4, 60)
    trinket = make_trinket(reg=registry, path="text", hard_max_tools=8)
    trinket.handle_meta("full", LOAD_TOOLS, {"tools": [f"srv1_tool{i}" for i in range(8)]})
    before = set(trinket.loaded("full"))
    refused = trinket.handle_meta("full", LOAD_TOOLS, {"tools": ["srv3"]})
    assert "Refused: srv3_tool0, srv3_tool1" in refused and "name the ones you need" in refused
    assert set(trinket.loaded("full")) == before
    loaded = trinket.handle_meta("full", LOAD_TOOLS, {"tools": ["srv3_tool7"]})
    assert loaded.startswith("Loaded: srv3_tool7"), loaded
    assert set(trinket.loaded("full")) == before | {"srv3_tool7"}


def test_a_name_read_in_the_directory_loads_past_a_full_set(make_trinket: MakeTrinket) -> None:
    """At ``hard_max_tools`` the directory is still the answer (listing 240 tools for one would
    cost far more), and what the model then names from it loads past the cap, as the fallback's
    own loads do: the tool is callable and nothing leaves."""
    registry = catalog(4, 60)  # names by bundle
    trinket = make_trinket(reg=registry, path="text", hard_max_tools=8)
    trinket.handle_meta("full", LOAD_TOOLS, {"tools": [f"srv1_tool{i}" for i in range(8)]})
    before = set(trinket.loaded("full"))
    answer = trinket.handle_meta("full", LOAD_TOOLS, {"tools": ["*"]})
    assert answer.startswith("Too many tools") and "srv2_tool4" in answer
    assert set(trinket.loaded("full")) == before  # a directory makes nothing callable
    loaded = trinket.handle_meta("full", LOAD_TOOLS, {"tools": ["srv2_tool4"]})
    assert loaded.startswith("Loaded: srv2_tool4"), loaded
    after = trinket.loaded("full")
    assert set(after) == before | {"srv2_tool4"}  # callable, and nothing unloaded
    view = trinket.prepare("full", [{"role": "user", "content": "go on"}])
    callable_ = {s.name for s in (*view.specs, *view.text_specs, *view.revealed)}
    assert "srv2_tool4" in callable_ and before <= set(view.loaded)


def test_names_too_many_to_read_give_way_to_the_bundles_alone(make_trinket: MakeTrinket) -> None:
    """The same pricing one level up: when the names cost more to read than the bundles and one
    more round trip, the answer names each bundle and its size, and a bundle loads by name."""
    assert lists_everything(300, 60, LATENCY) and not lists_everything(50_000, 2_400, LATENCY)
    registry = catalog(150, 30)
    text = directory(registry, bundles_only=True)
    assert text.startswith("Too many tools to name them all (4500 in 150 bundles)")
    assert ", srv7, " in text.splitlines()[1] and "srv7_tool3" not in text
    trinket = make_trinket(reg=registry, cost_profile="latency")
    assert trinket.catalog.fallback_answer() == "bundles"
    named = trinket.catalog.named()
    answer = trinket.handle_meta("wide", LOAD_TOOLS, {"tools": ["*"]})
    assert answer == directory(registry, True, named)
    trinket.handle_meta("wide", LOAD_TOOLS, {"tools": ["srv7"]})
    assert {f"srv7_tool{i}" for i in range(30)} <= set(trinket.loaded("wide"))


@pytest.mark.no_embedder
def test_past_the_cap_only_what_the_model_names_loads() -> None:
    """The rule on hand-made values: a full set refuses a bundle and a query's matches but not a
    tool named alone; once the turn's fallback answered with a directory, a named bundle's
    members load past the cap too (as escapes: they stay), a query's matches still do not, and
    nothing is unloaded."""
    registry = catalog(3, 4)
    held = tuple(
        LoadedTool(f"srv0_tool{i}", i, 1, None, "escape") for i in range(4)
    )  # srv0 loaded whole: the set is at hard_max = 4
    state = SessionState("s", SessionSnapshot("s", 1, "active", held, {}))
    ask = LoadRequest(names=("srv1_tool2", "srv2"), query="copies moves")
    matches = [Candidate("srv1_tool0", "escape", 1.0)]
    before = load_tools(registry, state, ask, lambda q: matches, hard_max=4)
    assert before.added == ["srv1_tool2"] and "srv2_tool0" in before.refused
    assert "srv1_tool0" in before.refused
    state.fallback_turn = 1  # the directory was this turn's answer
    after = load_tools(registry, state, ask, lambda q: matches, hard_max=4)
    assert after.added == ["srv1_tool2", *(f"srv2_tool{i}" for i in range(4))]
    assert after.refused == ["srv1_tool0"] and not after.changes.unloads
    assert {load.source for load in after.changes.loads} == {"escape"}
    state.fallback_turn = 0  # an earlier turn's directory opens no bundle now
    assert load_tools(registry, state, ask, lambda q: matches, hard_max=4).added == ["srv1_tool2"]


def test_the_bundles_alone_leave_out_what_the_menu_names(make_trinket: MakeTrinket) -> None:
    """The menu is in the prompt on every call, so the directory of bundles (which stays in the
    conversation) lists only the bundles it does not name; a named one still loads by name. A
    trinket whose model never reads the menu (a gateway's client) lists them all."""
    registry = catalog(150, 30)
    whole = directory(registry, bundles_only=True)
    text = directory(registry, True, {"srv7", "srv8"})
    assert text.startswith("Too many tools to name them all (4500 in 150 bundles)")
    assert "beyond the 2 the menu names" in text.splitlines()[0]
    shown = text.splitlines()[1].removeprefix("- bundles: ").split(", ")
    assert len(text.splitlines()) == 2 and "srv9" in shown and "srv7" not in shown
    assert set(whole.splitlines()[1].removeprefix("- bundles: ").split(", ")) == {
        f"srv{i}" for i in range(150)
    }
    trinket = make_trinket(reg=registry, cost_profile="latency")
    assert trinket.catalog.named() == {f"srv{i}" for i in range(150)}  # all fit in the menu
    assert "srv7" not in trinket.handle_meta("wide", LOAD_TOOLS, {"tools": ["*"]})
    trinket.handle_meta("wide", LOAD_TOOLS, {"tools": ["srv7"]})
    assert {f"srv7_tool{i}" for i in range(30)} <= set(trinket.loaded("wide"))
    blind = make_trinket(reg=registry, cost_profile="latency")
    blind.shows_menu = False
    assert blind.handle_meta("blind", LOAD_TOOLS, {"tools": ["*"]}) == whole


def test_a_revealed_tool_is_named_once_in_the_answer(make_trinket: MakeTrinket) -> None:
    """Revealing by appending lists each loaded tool's line (its name first) after the answer,
    so the answer counts them instead of naming each a second time."""
    trinket = make_trinket(reg=catalog(4, 60), reveal="append")
    trinket.prepare("once", [{"role": "user", "content": "rename a file"}])
    answer = trinket.handle_meta("once", LOAD_TOOLS, {"tools": ["srv2_tool3", "srv1_tool0"]})
    assert answer.startswith("Loaded 2 tools, listed below.")
    assert answer.count("srv2_tool3") == 1 and answer.count("srv1_tool0(") == 1
    assert {"srv2_tool3", "srv1_tool0"} <= set(trinket.loaded("once"))
    one = trinket.handle_meta("once", LOAD_TOOLS, {"tools": ["srv3_tool5"]})
    assert one.startswith("Loaded 1 tool, listed below.") and one.count("srv3_tool5") == 1
