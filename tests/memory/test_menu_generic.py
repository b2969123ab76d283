"""A cut menu names the generic tools' servers first, once the catalog's vectors are in.

A menu over its token budget names the servers that fit, the deployment's used ones first,
then the shortest names. A task needs a code runner, a shell, files or fetch without naming
them, so no search finds their server and, left out of the menu, the model falls back to the
whole directory. Once the vectors are in, the next session boundary decides the menu again with
those servers named first. Real MCP servers' tool lists (one tool each from 200 servers, with
the code runner), the real embedder, the conftest's databases.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from gated_embedder import Gated, trinket_over
from mcp_catalog import SERVERS, servers_catalog

from tooltray.memory.config import Settings
from tooltray.memory.core.menu import bundle_menu, listed
from tooltray.memory.retrieval.selector import IndexSelector
from tooltray.memory.tuning import MENU_BUDGET
from tooltray.tools.errors import EmbedderError
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import count_tokens
from tooltray.tools.spec import ToolSpec

from .conftest import MakeTrinket, finish_turn, user

pytestmark = pytest.mark.filterwarnings("ignore:Tool .* has an empty description")
RUNNER = "mcp-server-code-runner"
TASK = "Based on the file ./data/Q12.txt, answer the following question."


def catalog() -> ToolRegistry:
    """The first tool of 200 real servers (a menu far over budget) and the code runner's."""
    names = sorted(p.stem for p in SERVERS.glob("*.json") if not p.stem.startswith("_"))
    kept = [n for n in names if n != RUNNER][:200] + [RUNNER]
    specs: dict[str, ToolSpec] = {}
    for server in kept:
        first = servers_catalog(server)[:1]
        specs.update((s.name, s) for s in first if s.name not in specs)  # forks share names
    return ToolRegistry(list(specs.values()))


@pytest.mark.parametrize("profile", ["price", "latency"])
def test_a_cut_menu_names_the_code_runner_once_the_vectors_are_in(
    make_trinket: MakeTrinket, profile: str
) -> None:
    registry = catalog()
    without = bundle_menu(registry.bundles())  # decided before any vector: shortest names first
    assert RUNNER not in listed(without) and len(listed(without)) < len(registry.bundles())
    trinket = make_trinket(reg=registry, embed_catalog="wait", cost_profile=profile)
    view = trinket.prepare("s", [user(TASK)])
    menu = trinket.catalog.menu_for(trinket.store.snapshot("s").meta)[0]  # type: ignore[union-attr]
    assert RUNNER in listed(menu) and menu in view.system_prefix
    assert count_tokens(menu).n <= MENU_BUDGET  # within the budget, as before
    if profile == "price":  # the generic servers' names alone price lower than the cut menu
        assert len(listed(menu)) < 10


def test_a_record_names_its_servers_instead_of_the_guess(make_trinket: MakeTrinket) -> None:
    registry = catalog()
    cut = listed(bundle_menu(registry.bundles()))
    used = next(b for b in registry.bundles() if b.name not in cut and b.name != RUNNER)
    trinket = make_trinket(reg=registry, embed_catalog="wait", cost_profile="price")
    for n in range(3):  # three past sessions used one server
        view = trinket.prepare(f"past{n}", [user(TASK)])
        finish_turn(f"past{n}", view.turn, [used.members[0]])
    later = make_trinket(reg=registry, embed_catalog="wait", cost_profile="price")
    later.prepare("s", [user(TASK)])
    menu = later.catalog.menu_for(later.store.snapshot("s").meta)[0]  # type: ignore[union-attr]
    assert used.name in listed(menu) and RUNNER not in listed(menu)


def test_sessions_started_before_the_vectors_keep_their_menu_later_ones_name_the_runner(
    tmp_path: Path,
) -> None:
    registry, gated, url = catalog(), Gated(), f"sqlite:///{tmp_path / 'gated.db'}"
    settings = Settings(db=url, embed_catalog="background", cost_profile="price")
    trinket = trinket_over(registry, gated, settings)
    try:
        early = trinket.prepare("early", [user(TASK)])  # the gate closed: a lexical start
        gated.gate.set()
        selector = trinket.catalog.selector()
        assert isinstance(selector, IndexSelector) and selector.index.wait_for_vectors()
        later = trinket.prepare("later", [user(TASK)])
        again = trinket.prepare("early", [user(TASK), user("And the next question?")])
    finally:
        trinket.close()
        trinket.store.close()
    assert RUNNER not in early.system_prefix and RUNNER in later.system_prefix
    assert again.prefix_hash == early.prefix_hash  # a started session keeps its menu


class Down(Gated):
    """An embedding server that is down: every call fails."""

    def embed(self, texts: Sequence[str], kind: Any = "document") -> Any:
        raise EmbedderError("embedding server at http://127.0.0.1:9 is down: start it")


def test_a_cut_menu_with_the_embedder_down_keeps_the_turn_alive(tmp_path: Path) -> None:
    registry, down, url = catalog(), Down(), f"sqlite:///{tmp_path / 'down.db'}"
    settings = Settings(db=url, embed_catalog="wait", cost_profile="price")
    trinket = trinket_over(registry, down, settings)
    try:
        view = trinket.prepare("s", [user(TASK)])  # the boundary asks for vectors: none come
        health = trinket.state("s").health
    finally:
        trinket.close()
        trinket.store.close()
    assert RUNNER not in listed(trinket.catalog.menu()) and view.loaded  # degraded, not raised
    assert health == "degraded"
