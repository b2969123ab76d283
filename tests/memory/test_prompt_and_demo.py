"""The prompt's layout, the every-turn growth policy, and the demo's resume / --fresh."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from tooltray.memory.cli.main import cli
from tooltray.memory.core.prompt import bundle_menu, compose
from tooltray.tools.demo import demo_registry

from .conftest import MakeTrinket, finish_turn, user

TRIP = "Find me flights from Boston to Lisbon on Nov 10 and a hotel there under 180 a night."
CODE = "The parse_range test is failing: read src/dates.py and fix the off-by-one bug."


def _view(path: str, count: int) -> tuple[str, list[str], str]:
    registry = demo_registry()
    specs = registry.allowed()[:count]
    menu = bundle_menu(registry.bundles())
    view = compose(
        session_id="p",
        turn=1,
        path=path,
        mode="selected",
        instructions="You are a careful assistant.",
        specs=specs,
        menu=menu,
        eager_tokens=0,
    )
    names = [t["function"]["name"] for t in view.tools()] if path == "openai" else []
    return view.system_prefix, names, menu


def test_native_prefix_is_instructions_then_menu_and_tools_only_append() -> None:
    prefix, names, menu = _view("openai", 5)
    assert prefix == "You are a careful assistant.\n\n" + menu
    _, more, _ = _view("openai", 8)
    assert more[:5] == names and len(more) == 8
    assert _view("openai", 8)[0] == prefix


def test_text_prefix_keeps_the_tool_block_last() -> None:
    prefix, _, menu = _view("text", 5)
    assert prefix.startswith("You are a careful assistant.\n\n" + menu + "\n\nTools:\n")
    longer, _, _ = _view("text", 8)
    head = prefix[: prefix.index("Tools:\n")]
    assert longer.startswith(head) and longer != prefix


def test_every_turn_growth_appends_picks_for_each_new_message(make_trinket: MakeTrinket) -> None:
    trinket = make_trinket(growth="every_turn")
    first = list(trinket.prepare("e", [user(TRIP)]).loaded)
    finish_turn("e", 1)
    history = [user(TRIP), {"role": "assistant", "content": "ok"}, user(CODE)]
    second = list(trinket.prepare("e", history).loaded)
    assert second[: len(first)] == first
    added = second[len(first) :]
    assert any(n.startswith("files_") for n in added), added
    sources = {t.name: t.source for t in trinket.state("e").snapshot.loaded}
    assert all(sources[n] in ("semantic", "lexical", "bundle") for n in added)


def test_demo_resumes_the_stored_session_and_fresh_starts_another(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    runner = CliRunner()
    first = runner.invoke(cli, ["demo", "--db", url, "--turns", "2"])
    assert first.exit_code == 0, first.output
    assert re.search(r"starting demo-1 at turn 1 of \d+", first.output)
    again = runner.invoke(cli, ["demo", "--db", url, "--turns", "2"])
    assert again.exit_code == 0, again.output
    assert re.search(r"resuming demo-1 at turn 3 of \d+", again.output)
    fresh = runner.invoke(cli, ["demo", "--db", url, "--turns", "1", "--fresh"])
    assert fresh.exit_code == 0, fresh.output
    assert re.search(r"starting demo-2 at turn 1 of \d+", fresh.output)
    query = "SELECT session_id, turn FROM turns ORDER BY 1, 2"
    turns = runner.invoke(cli, ["sql", query, "--db", url, "--format", "csv"])
    assert turns.output.splitlines()[1:] == [
        "demo-1,1",
        "demo-1,2",
        "demo-1,3",
        "demo-1,4",
        "demo-2,1",
    ]
