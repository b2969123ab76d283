"""``boilerplate_once``: off changes nothing; on keeps the span on a bundle's first shown tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tooltray.memory.config import Settings
from tooltray.memory.core.catalog import AllowedCatalog
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import render

SHARED = "This tool belongs to the demo file system, which keeps every file in memory."
VERBS = ["Read a file by path.", "Write text to a file.", "Delete a file.", "List a folder."]


def _planner(make: Any, on: bool) -> AllowedCatalog:
    tools = [make(f"fs_{i}", f"{SHARED} {v}", "files") for i, v in enumerate(VERBS)]
    tools.append(make("clock", "Tell the current time in a given time zone."))
    return AllowedCatalog(ToolRegistry(tools), Settings(db="sqlite://", boilerplate_once=on))


def test_off_renders_the_same_bytes(make: Any) -> None:
    planner = _planner(make, on=False)
    specs = planner.registry.allowed()
    assert render("openai", planner.shown(specs)) == render("openai", specs)


def test_on_states_the_span_once_per_shown_set(make: Any) -> None:
    planner = _planner(make, on=True)
    specs = planner.registry.allowed()
    later = planner.shown([specs[2], specs[0], specs[4]])
    assert later[0].description.startswith(SHARED)  # first of its bundle in this view
    assert later[1].description == VERBS[0] and later[2] == specs[4]


def test_on_costs_fewer_tokens(make: Any) -> None:
    on, off = _planner(make, on=True), _planner(make, on=False)
    saved = sum(off.prepared().tokens.values()) - sum(on.prepared().tokens.values())
    assert saved > 3 * 10 and on.eager_tokens() < off.eager_tokens()


def test_on_by_default() -> None:
    assert Settings(db="sqlite://").boilerplate_once is True


def test_a_disabled_loader_shows_every_description_whole(make: Any, tmp_path: Path) -> None:
    tools = [make(f"fs_{i}", f"{SHARED} {v}", "files") for i, v in enumerate(VERBS)]
    registry = ToolRegistry(tools)
    settings = Settings(db=f"sqlite:///{tmp_path / 't.db'}", enabled=False)
    with ToolLoaderTrinket(registry, settings=settings) as trinket:
        view = trinket.prepare("s", [{"role": "user", "content": "delete a file"}])
    assert view.mode == "disabled"
    assert [s.description for s in view.specs] == [t.description for t in tools]
