"""The bundle menu's budget: what every call pays stays bounded as a catalog's servers grow."""

from __future__ import annotations

import random

from tooltray.memory.config import Settings
from tooltray.memory.core.catalog import AllowedCatalog
from tooltray.memory.core.menu import bundle_menu, listed, rank
from tooltray.memory.metatools.meta_tools import LOAD_TOOLS
from tooltray.memory.tuning import MENU_BUDGET
from tooltray.tools.demo import demo_registry
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import count_tokens
from tooltray.tools.spec import ToolSpec

from .conftest import MakeTrinket, finish_turn, user

VERBS = ("list", "get", "create", "update", "delete", "search", "export", "sync")
NOUNS = ("issue", "page", "record", "invoice", "ticket", "file", "event", "report", "user")


def servers(n: int) -> ToolRegistry:
    """``n`` undescribed servers of 1-8 tools each, names and sizes from a fixed seed."""
    rng = random.Random(n)
    specs = []
    for i in range(n):
        server = f"{rng.choice(NOUNS)}-hub-{i}"
        for k in range(1 + i % 4):
            tool = f"{server.replace('-', '_')}_{VERBS[k]}_{rng.choice(NOUNS)}"
            specs.append(ToolSpec(name=tool, description=f"{VERBS[k]} one.", bundle=server))
    return ToolRegistry(specs)


def fixed(registry: ToolRegistry) -> int:
    planner = AllowedCatalog(registry, Settings(db="sqlite://", path="openai"))
    return planner.fixed_tokens()


def test_the_fixed_part_stays_bounded_as_servers_grow() -> None:
    menus = [count_tokens(bundle_menu(servers(n).bundles())).n for n in (20, 70, 300, 1000)]
    assert all(m <= MENU_BUDGET for m in menus)
    whole = count_tokens(bundle_menu(servers(1000).bundles(), budget=10**9)).n
    assert whole > 20 * MENU_BUDGET  # what one line per server would cost
    fixeds = [fixed(servers(n)) for n in (20, 70, 300)]
    assert fixeds[1] <= 1000
    # 15x the servers from 20 to 300, the fixed part not even 2x: sublinear, in fact bounded
    assert fixeds[-1] < 2 * fixeds[0]


def test_a_menu_that_fits_is_the_whole_menu_byte_for_byte() -> None:
    bundles = demo_registry().bundles()
    assert bundle_menu(bundles) == bundle_menu(bundles, budget=10**9)
    assert listed(bundle_menu(bundles)) == {b.name for b in bundles}


def test_a_cut_menu_names_every_server_and_describes_the_largest() -> None:
    bundles = servers(60).bundles()
    menu = bundle_menu(bundles)
    assert menu != bundle_menu(bundles, budget=10**9)
    assert listed(menu) == {b.name for b in bundles} and "more bundles" not in menu
    described = [line for line in menu.splitlines() if not line.startswith(("- also: ", "Tool"))]
    assert len(described) > 3
    assert all(f"- {b.name}: " in menu for b in rank(bundles)[: len(described)])


def test_past_the_budget_it_names_the_most_servers_and_counts_the_rest() -> None:
    bundles = servers(300).bundles()
    menu = bundle_menu(bundles)
    lines = menu.splitlines()
    named = lines[1].removeprefix("- also: ").split(", ")
    assert len(lines) == 3 and lines[2].startswith(f"+{len(bundles) - len(named)} more bundles")
    # shortest names first: none left out is shorter than the longest one named
    hidden = {b.name for b in bundles} - set(named)
    assert min(count_tokens(n).n for n in hidden) >= max(count_tokens(n).n for n in named)


def test_a_cut_menu_is_byte_stable_whatever_the_bundle_order() -> None:
    bundles = servers(300).bundles()
    shuffled = list(bundles)
    random.Random(7).shuffle(shuffled)
    assert bundle_menu(shuffled) == bundle_menu(bundles)


def test_a_server_the_menu_leaves_out_still_loads_by_name(make_trinket: MakeTrinket) -> None:
    registry = servers(120)
    hidden = sorted({b.name for b in registry.bundles()} - listed(bundle_menu(registry.bundles())))
    assert hidden
    trinket = make_trinket(reg=registry)
    answer = trinket.handle_meta("s", LOAD_TOOLS, {"tools": [hidden[0]]})
    members = next(b.members for b in registry.bundles() if b.name == hidden[0])
    assert set(members) <= set(trinket.loaded("s")), answer


def test_a_cut_menu_names_the_servers_a_deployment_used_first() -> None:
    bundles = servers(300).bundles()
    hidden = sorted({b.name for b in bundles} - listed(bundle_menu(bundles)))
    menu = bundle_menu(bundles, used=[hidden[-1], "no-such-server"])
    assert hidden[-1] in listed(menu) and count_tokens(menu).n <= MENU_BUDGET
    assert bundle_menu(bundles, used=[]) == bundle_menu(bundles)
    whole = servers(20).bundles()  # a menu that fits is the same whatever was used
    assert bundle_menu(whole, used=[whole[-1].name]) == bundle_menu(whole)


def test_a_new_process_names_the_server_past_sessions_used(make_trinket: MakeTrinket) -> None:
    registry = servers(120)
    first = make_trinket(reg=registry, menu="always")
    hidden = sorted({b.name for b in registry.bundles()} - first.catalog.named())
    assert hidden
    tool = next(b.members[0] for b in registry.bundles() if b.name == hidden[-1])
    for i in range(3):
        first.prepare(f"past-{i}", [user("Do the usual end-of-day job.")])
        finish_turn(f"past-{i}", 1, [tool])
    later = make_trinket(reg=registry, menu="always")
    assert hidden[-1] in later.catalog.named()
    assert hidden[-1] not in first.catalog.named()  # a prepared menu never changes
