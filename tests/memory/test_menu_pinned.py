"""A session's bundle menu is pinned at its boundary: a cut menu follows the deployment's
record, so a process started later decides another one, and a session it serves after a
restart (or beside the process that started it) must still see the prompt prefix it had."""

from __future__ import annotations

from tooltray.memory.core import decision as decide
from tooltray.memory.core.decision import Snap
from tooltray.memory.core.session import empty_snapshot
from tooltray.memory.metatools.meta_tools import LOAD_TOOLS
from tooltray.memory.store.records import Changes
from tooltray.memory.tuning import MENU_RENEW
from tooltray.tools.registry import ToolRegistry

from .conftest import MakeTrinket, finish_turn, user
from .test_menu_budget import servers

ASK = [user("Do the usual end-of-day job.")]


def _hidden_used(make_trinket: MakeTrinket, registry: ToolRegistry, **settings: str) -> str:
    """Three past sessions use a server the first process's menu leaves out; its name."""
    first = make_trinket(reg=registry, menu="always", **settings)
    first.prepare("s", ASK)  # session s starts under the first process's menu
    hidden = sorted({b.name for b in registry.bundles()} - first.catalog.named())
    tool = next(b.members[0] for b in registry.bundles() if b.name == hidden[-1])
    for i in range(3):
        first.prepare(f"past-{i}", ASK)
        finish_turn(f"past-{i}", 1, [tool])
    return hidden[-1]


def test_a_session_keeps_its_menu_in_a_process_that_decided_another(
    make_trinket: MakeTrinket,
) -> None:
    registry = servers(120)
    before = make_trinket(reg=registry, menu="always").prepare("s", ASK)
    used = _hidden_used(make_trinket, registry)
    later = make_trinket(reg=registry, menu="always")  # a restart, or a second process
    assert used in later.catalog.named()  # the record moved this process's menu
    again = later.prepare("s", ASK)
    assert again.prefix_hash == before.prefix_hash
    assert again.system_prefix == before.system_prefix and used not in before.system_prefix
    fresh = later.prepare("t", ASK)  # a new session takes the new menu
    assert used in fresh.system_prefix and fresh.prefix_hash != before.prefix_hash


def test_a_long_lived_process_renews_its_menu_for_new_sessions(
    make_trinket: MakeTrinket,
) -> None:
    """Every ``MENU_RENEW`` session boundaries the process decides its menu again from the
    record: new sessions follow the servers past sessions used, older ones keep theirs."""
    registry = servers(120)
    process = make_trinket(reg=registry, menu="always")
    before = process.prepare("s", ASK)
    hidden = sorted({b.name for b in registry.bundles()} - process.catalog.named())
    tool = next(b.members[0] for b in registry.bundles() if b.name == hidden[-1])
    for i in range(3):
        process.prepare(f"past-{i}", ASK)
        finish_turn(f"past-{i}", 1, [tool])
    assert hidden[-1] not in process.prepare("early", ASK).system_prefix
    for i in range(MENU_RENEW):
        process.prepare(f"later-{i}", ASK)
    assert hidden[-1] in process.prepare("late", ASK).system_prefix
    assert process.prepare("s", ASK).prefix_hash == before.prefix_hash


def test_meta_tools_read_the_sessions_own_menu(make_trinket: MakeTrinket) -> None:
    """A search's bundles line and the fallback's directory leave out what the session's menu
    names, not what this process's names: a server only the new menu names is still shown to
    a session whose pinned menu leaves it out."""
    registry = servers(200)  # deciding on price, its fallback answers with the bundles
    used = _hidden_used(make_trinket, registry, cost_profile="price")
    later = make_trinket(reg=registry, menu="always", cost_profile="price")
    later.prepare("t", ASK)
    old = later.handle_meta("s", LOAD_TOOLS, {"tools": ["*"]})
    new = later.handle_meta("t", LOAD_TOOLS, {"tools": ["*"]})
    assert used in old and used not in new, (old, new)


def test_a_changed_catalog_or_setting_shows_at_once(make_trinket: MakeTrinket) -> None:
    registry = servers(120)
    pinned = make_trinket(reg=registry, menu="always").prepare("s", ASK).system_prefix
    named = sorted(b for b in make_trinket(reg=registry, menu="always").catalog.named())
    members = next(b.members for b in registry.bundles() if b.name == named[0])
    denied = make_trinket(reg=registry, menu="always", deny=list(members))
    shown = denied.prepare("s", ASK).system_prefix
    assert f" {named[0]}," in pinned or f"- {named[0]}:" in pinned
    assert named[0] not in shown  # a server the deny-list took away is never named
    hint = make_trinket(reg=registry, menu="never").prepare("s", ASK).system_prefix
    assert hint != pinned and named[1] not in hint


def test_a_boundary_pins_the_menu_it_is_given() -> None:
    snap = Snap(empty_snapshot("s"))
    menu = {"of": "k", "text": "Tool bundles for load_tools:\n- also: a, b"}
    assert decide.start(snap, 3, fresh=True, menu=menu).changes[0].meta == {
        "selected": False,
        "menu": menu,
    }
    assert "menu" not in (decide.start(snap, 3, fresh=True).changes[0].meta or {})
    folded = decide.compacted(snap, 4, 3, "prefix", menu).changes
    assert folded[0].meta == {"menu": menu}


def test_a_fork_keeps_its_parents_menu(make_trinket: MakeTrinket) -> None:
    """A subagent's system prefix is its parent's, even from a process whose menu moved."""
    registry = servers(120)
    parent = make_trinket(reg=registry, menu="always").prepare("s", ASK)
    used = _hidden_used(make_trinket, registry)
    later = make_trinket(reg=registry, menu="always")
    later.fork("s", "child")
    child = later.prepare("child", ASK)
    assert child.system_prefix == parent.system_prefix and used not in child.system_prefix


def test_a_session_whose_client_never_reads_the_menu_pins_none(make_trinket: MakeTrinket) -> None:
    """A gateway's MCP client is shown tools, not the system text: nothing to keep stable."""
    shown = make_trinket(reg=servers(120), menu="always")
    blind = make_trinket(reg=servers(120), menu="always")
    blind.shows_menu = False
    shown.prepare("s", ASK)
    blind.prepare("g", ASK)
    pinned = (shown.store.snapshot("s"), blind.store.snapshot("g"))
    assert pinned[0] is not None and pinned[0].meta["menu"]["text"] == shown.catalog.menu()
    assert pinned[1] is not None and "menu" not in pinned[1].meta


def test_a_damaged_pin_shows_the_process_menu(make_trinket: MakeTrinket) -> None:
    """Whatever a session's stored ``menu`` holds, a prepare answers with the process's menu
    and the session goes on (a database written by hand, or by another version)."""
    registry = servers(120)
    trinket = make_trinket(reg=registry, menu="always")
    menu = trinket.catalog.menu()
    key = trinket.catalog.pin()["of"]
    for i, bad in enumerate(["x", ["a"], {"of": key, "text": 5}, {"of": None}, {"of": key}]):
        trinket.prepare(f"d{i}", ASK)
        trinket.store.apply(f"d{i}", Changes(meta={"menu": bad}))  # type: ignore[typeddict-item]
        later = make_trinket(reg=registry, menu="always")
        view = later.prepare(f"d{i}", ASK)
        assert menu in view.system_prefix, bad
        assert later.handle_meta(f"d{i}", LOAD_TOOLS, {"query": "list one issue"})
