"""The bundle menu in the prefix only where it costs less than listing the bundles on demand."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from tooltray.memory.config import Settings
from tooltray.memory.core.menu import LIST_HINT, MENU_HEADER
from tooltray.memory.core.policy import LATENCY, PRICE, Listed, menu_pays, unnamed
from tooltray.memory.learning.usage import Usage
from tooltray.memory.metatools.meta_tools import LOAD_TOOLS, directory
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import Bundle, ToolSpec

from .conftest import MakeTrinket, finish_turn, user
from .test_fallback_directory import catalog as wide

README = Path(__file__).resolve().parents[2] / "README.md"


def catalog(servers: int, tools: int = 3) -> ToolRegistry:
    """``servers`` described bundles (a long line each in the menu) of ``tools`` tools."""
    specs = [
        ToolSpec(
            name=f"srv{s}_op{t}",
            description=f"Operation {t} of service {s}.",
            parameters={"type": "object", "properties": {"id": {"type": "string"}}},
            bundle=f"srv{s}",
        )
        for s in range(servers)
        for t in range(tools)
    ]
    said = "records, reports and accounts of one service"
    return ToolRegistry(
        specs, bundles=[Bundle(name=f"srv{s}", description=said) for s in range(servers)]
    )


def test_the_rule_keeps_a_short_menu_and_drops_a_long_one() -> None:
    """Hand-made sizes: eight bundles' 150-token menu against an 80-token directory stays; a
    500-token menu whose bundles list in 300 tokens goes on price, not on latency (a round
    trip of 1.7 s outweighs half a second of prefill)."""
    assert menu_pays(150, 15, Listed(80), PRICE) and menu_pays(150, 15, Listed(80), LATENCY)
    assert not menu_pays(490, 15, Listed(310), PRICE)
    assert menu_pays(490, 15, Listed(310), LATENCY)
    # more bundles to list on demand make the menu worth its place again
    assert menu_pays(490, 15, Listed(3_000), PRICE)


def test_a_menu_that_leaves_bundles_out_still_pays_their_trip() -> None:
    """A budgeted menu naming half the tools' bundles saves the trip for that half only."""
    whole = Listed(1_200)
    assert menu_pays(500, 15, whole, PRICE)
    assert menu_pays(500, 15, Listed(1_200, 700, 0.3), PRICE)
    assert not menu_pays(500, 15, Listed(1_200, 700, 0.7), PRICE)


def _messages(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_a_session_without_a_menu_loads_a_bundle_from_the_directory(
    make_trinket: MakeTrinket,
) -> None:
    """Seventy described bundles on price: the prefix has the hint, not the menu; ``*`` answers
    with every bundle's name; a bundle named from it loads; the prefix never changes."""
    registry = catalog(70)
    trinket = make_trinket(reg=registry, cost_profile="price")
    assert trinket.catalog.menu() == LIST_HINT and not trinket.catalog.named()
    view = trinket.prepare("s", _messages("file the quarterly report"))
    assert LIST_HINT in view.system_prefix and MENU_HEADER not in view.system_prefix
    first = view.prefix_hash
    answer = trinket.handle_meta("s", LOAD_TOOLS, {"tools": ["*"]})
    assert answer == directory(registry, True)
    shown = re.search(r"^- bundles: (.*)$", answer, re.M)
    assert shown is not None and set(shown.group(1).split(", ")) == {f"srv{s}" for s in range(70)}
    trinket.handle_meta("s", LOAD_TOOLS, {"tools": ["srv42"]})
    again = trinket.prepare("s", _messages("file the quarterly report"))
    assert {"srv42_op0", "srv42_op1", "srv42_op2"} <= set(again.loaded)
    assert again.prefix_hash == first


def test_the_same_catalog_keeps_its_menu_on_latency_and_when_forced(
    make_trinket: MakeTrinket,
) -> None:
    registry = catalog(70)
    for settings in ({"cost_profile": "latency"}, {"cost_profile": "price", "menu": "always"}):
        menu = make_trinket(reg=registry, **settings).catalog.menu()
        assert menu.startswith(MENU_HEADER), settings
    small = make_trinket(reg=catalog(8), cost_profile="price")
    assert small.catalog.named() == {f"srv{s}" for s in range(8)}  # a few bundles: kept
    forced = make_trinket(reg=catalog(8), cost_profile="latency", menu="never")
    assert forced.catalog.menu() == LIST_HINT
    # 24 short tools cost less to list than their bundles and a round trip: every tool it is
    assert forced.handle_meta("s", LOAD_TOOLS, {"tools": ["*"]}).startswith("Fallback: all 24")


def test_the_readme_settings_row_matches_the_setting() -> None:
    row = next(line for line in README.read_text().splitlines() if line.startswith("| `menu` |"))
    default = Settings.model_fields["menu"].default
    assert row.split(" | ")[1] == f"`{default}`"
    assert all(f"`{value}`" in row for value in get_args(Settings.model_fields["menu"].annotation))


@pytest.mark.parametrize("choice", ["priced", "always", "never"])
def test_every_menu_choice_is_a_valid_setting(choice: str) -> None:
    assert Settings(db="sqlite://", menu=choice).menu == choice


def test_without_a_menu_a_search_names_its_next_matches_bundles(make_trinket: MakeTrinket) -> None:
    """The bundles line leaves out what the menu names; with no menu it names any bundle, and
    the model loads one from it as a gateway's client does."""
    registry = ToolRegistry(wide(40, 6).allowed())
    query = {"query": "renames copies moves"}
    shown = make_trinket(reg=registry, menu="always")
    assert shown.catalog.named() == {f"srv{s}" for s in range(40)}
    assert "- bundles: " not in shown.handle_meta("s", LOAD_TOOLS, query)
    hinted = make_trinket(reg=registry, menu="never")
    answer = hinted.handle_meta("s", LOAD_TOOLS, query)
    named = answer.split("\n- bundles: ", 1)[1].splitlines()[0].split(", ")
    hinted.handle_meta("s", LOAD_TOOLS, {"tools": [named[0]]})
    assert {f"{named[0]}_tool{i}" for i in range(6)} <= set(hinted.loaded("s"))


def test_a_record_moves_the_needs_a_menu_leaves_out_onto_the_servers_it_used() -> None:
    sizes = {"fs": 10, "git": 30, "crm": 60}
    assert unnamed({"git"}, sizes, {}, 1.0) == 0.7  # no record: the tool share left out
    used = {"fs": 4.0, "git": 1.0}
    assert unnamed({"fs", "git"}, sizes, used, 0.0) == 0.0  # every need like a past one
    assert unnamed({"fs"}, sizes, used, 0.0) == pytest.approx(0.2)  # git's share of the uses
    # a tenth of sessions needed a server no other did: a tenth of needs fall on crm
    assert unnamed({"fs", "git"}, sizes, used, 0.1) == pytest.approx(0.1)


def test_novel_counts_the_sessions_that_alone_used_a_server() -> None:
    of = {"read": "fs", "write": "fs", "commit": "git", "call": "crm"}
    often = (frozenset({"read"}), frozenset({"write", "commit"}), frozenset({"commit"}))
    usage = Usage((1.0,) * 6, (*often, frozenset({"call"}), frozenset({"read"}), frozenset()))
    assert usage.novel(of) == pytest.approx(1 / 6)  # crm's one session
    assert Usage((1.0,) * 2, often[:2]).novel(of) == 1.0  # too few sessions: no record


def test_a_deployment_that_used_few_of_many_servers_names_them_alone(
    make_trinket: MakeTrinket,
) -> None:
    """Price deciding on 200 servers: without a record the rule's menu (or its hint); once
    sessions have used two servers, a menu of those two names, the rest one count away."""
    registry = catalog(200, 1)
    cold = make_trinket(reg=registry, cost_profile="price")
    assert len(cold.catalog.named()) != 2
    for i in range(8):
        cold.prepare(f"past-{i}", [user("Do the usual end-of-day job.")])
        finish_turn(f"past-{i}", 1, ["srv7_op0", "srv150_op0"])
    later = make_trinket(reg=registry, cost_profile="price")
    assert later.catalog.named() == {"srv7", "srv150"}
    assert "+198 more bundles" in later.catalog.menu()
    answer = later.handle_meta("s", LOAD_TOOLS, {"tools": ["*"]})
    assert "srv42" in answer and "srv7," not in answer  # the directory lists the rest
