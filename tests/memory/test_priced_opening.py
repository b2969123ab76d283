"""A session boundary is one priced decision: every tool, an opening set, or CORE alone.

The planner on real catalogs with the real embedder: a catalog smaller than selection's fixed
part loads whole, a large one opens with the picks worth holding, and the price profile holds
fewer than the latency one. The rules' arithmetic by hand is in ``test_policy.py`` (no embedder).
"""

from __future__ import annotations

import pytest

from tooltray.memory.config import Settings
from tooltray.memory.core.catalog import AllowedCatalog
from tooltray.memory.core.session import SessionState
from tooltray.memory.learning.usage import Usage
from tooltray.memory.store.records import empty_snapshot
from tooltray.memory.tuning import LATER_NEEDS
from tooltray.tools.demo import demo_registry
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import tokens_per_tool
from tooltray.tools.spec import ToolSpec

TRIP = "Find me flights from Boston to Lisbon on Nov 10 and a hotel there under 180 a night."


def _planner(registry: ToolRegistry, **settings: object) -> AllowedCatalog:
    return AllowedCatalog(registry, Settings(context_window=8192, **settings))


def _state() -> SessionState:
    return SessionState("s", empty_snapshot("s"))


def test_a_catalog_cheaper_than_the_fixed_part_loads_whole() -> None:
    tools = [
        ToolSpec(name="get_current_time", description="Current time in a timezone."),
        ToolSpec(name="convert_time", description="Convert a time between timezones."),
    ]
    plan = _planner(ToolRegistry(tools)).plan(_state(), ["what time is it"], initial=True)
    share = _planner(ToolRegistry(tools), opening="share", activation_share=0.0)
    assert plan.mode == "all" and {c.name for c in plan.loads} == {t.name for t in tools}
    assert share.plan(_state(), ["what time is it"], initial=True).mode == "selected"


def test_the_price_profile_holds_fewer_picks_than_the_latency_one() -> None:
    registry = demo_registry()
    opened = {}
    for profile in ("price", "latency"):
        plan = _planner(registry, cost_profile=profile).plan(_state(), [TRIP], initial=True)
        assert plan.mode == "selected"
        opened[profile] = [c.name for c in plan.loads if c.source not in ("core", "pinned")]
    assert 0 < len(opened["price"]) < len(opened["latency"])
    assert opened["price"] == opened["latency"][: len(opened["price"])]  # the same ranking's head
    assert {n.split("_")[0] for n in opened["latency"][:3]} == {"travel"}


def test_the_text_path_prices_its_opening_in_text_lines() -> None:
    """Eager on the text path is the text block, so the opening is priced in the lines it
    adds there too: priced in native schemas (about 3.5x) the demo catalog loaded whole."""
    registry = demo_registry()
    planner = _planner(registry, path="text")
    opening = planner._opening(planner._picks([TRIP], planner.signals))
    held = [s for s in registry.allowed() if s.name in {c.name for c in opening.held}]
    assert opening.tokens == sum(tokens_per_tool(held, "text").values())
    assert opening.tokens < sum(tokens_per_tool(held, "openai").values()) / 2
    assert planner.plan(_state(), [TRIP], initial=True).mode == "selected"


def test_the_share_opening_keeps_its_caps() -> None:
    plan = _planner(demo_registry(), opening="share", max_tools=3).plan(
        _state(), [TRIP], initial=True
    )
    picked = [c for c in plan.loads if c.source not in ("core", "pinned")]
    assert plan.mode == "selected" and len(picked) == 3


SHELL = {
    "ls": "List the files and folders in the current directory.",
    "cd": "Change the current working directory to the given folder.",
    "mkdir": "Create a new directory with the given name.",
    "rmdir": "Remove an empty directory.",
    "rm": "Remove a file or directory.",
    "cp": "Copy a file or directory to a destination.",
    "mv": "Move or rename a file or directory.",
    "cat": "Print the contents of a file.",
    "tail": "Show the last lines of a file.",
    "grep": "Search a file for lines matching a pattern.",
    "touch": "Create an empty file with the given name.",
    "echo": "Write text to the terminal or into a file.",
    "pwd": "Print the current working directory.",
    "find": "Find files by name under a directory.",
    "wc": "Count the lines, words or characters of a file.",
    "sort": "Sort the lines of a file.",
    "diff": "Compare two files line by line.",
    "du": "Estimate the disk usage of a directory.",
}
MOVE = "Go into the documents folder, create a folder called reports and move summary.txt there."


def _shell() -> ToolRegistry:
    """The shell tools with bfcl-sized schemas (about 90 tokens each, 1,600 in all)."""
    props = {
        "path": {"type": "string", "description": "The file or folder, relative to the cwd."},
        "recursive": {"type": "boolean", "description": "Also act on everything inside."},
        "pattern": {"type": "string", "description": "Only names matching this glob pattern."},
    }
    schema = {"type": "object", "properties": props, "required": ["path"]}
    return ToolRegistry(
        [ToolSpec(name=n, description=d, parameters=schema) for n, d in SHELL.items()]
    )


def test_a_small_catalog_loads_whole_when_its_opening_holds_little_of_a_session() -> None:
    """18 shell tools cost less than the opening plus the escapes its later turns are expected
    to make (the opening holds little of a session's needs), so the latency profile loads them
    all; the price profile, where an escape is cheap beside holding every tool, still selects."""
    planner = _planner(_shell())
    opening = planner._opening(planner._picks([MOVE], planner.signals))
    assert 0 < opening.kept < 2.0 and planner.eager_tokens() > planner.fixed_tokens()
    assert planner.plan(_state(), [MOVE], initial=True).mode == "all"
    price_plan = _planner(_shell(), cost_profile="price").plan(_state(), [MOVE], initial=True)
    assert price_plan.mode == "selected"


class _Past:
    """Signals that learned only what past sessions used: ``first`` tools on their first turn
    and ``later`` new ones after it (no companions, no votes)."""

    def __init__(self, first: float, later: float, sessions: int) -> None:
        self.first, self.later, self.sessions = first, later, sessions

    def companions(self, tools: object) -> dict[str, float]:
        return {}

    def past_requests(self, *args: object, **kwargs: object) -> dict[str, float]:
        return {}

    def past_searches(self, *args: object, **kwargs: object) -> dict[str, float]:
        return {}

    def session_needs(self, growth_miss: float) -> tuple[float, int]:
        return self.first + growth_miss * self.later, self.sessions

    def usage(
        self, session: str | None = None, explained: object = None, fresh: bool = True
    ) -> Usage:
        return Usage()


def test_history_moves_a_session_s_later_needs_from_the_prior() -> None:
    """Sessions that ended after their first turn keep the small catalog selected; sessions
    whose later turns spread over many tools keep it whole; without history the prior decides
    (loads whole, as above). The message's own task count stays in either case."""
    settings = Settings(context_window=8192)
    narrow = AllowedCatalog(_shell(), settings, signals=_Past(2.0, 0.0, 200))
    wide = AllowedCatalog(_shell(), settings, signals=_Past(1.0, 10.0, 200))
    assert narrow._later() == pytest.approx(LATER_NEEDS * 5 / 205)
    assert narrow._needs([MOVE]) == pytest.approx(1 + LATER_NEEDS * 5 / 205)
    assert narrow.plan(_state(), [MOVE], initial=True).mode == "selected"
    assert wide.plan(_state(), [MOVE], initial=True).mode == "all"
    assert AllowedCatalog(_shell(), settings, signals=_Past(2.0, 0.0, 0))._later() == LATER_NEEDS


def _trips() -> ToolRegistry:
    """The demo catalog's travel, weather and calendar bundles: 24 tools, 3,500 schema tokens."""
    demo, kept = demo_registry(), ("travel", "weather", "calendar")
    info = demo.catalog.bundle_info()
    tools = [s for s in demo.allowed() if s.bundle in kept]
    return ToolRegistry(tools, bundles=[b for name, b in info.items() if name in kept])


ONE_TASK = "What will the weather be in Lisbon tomorrow?"
THREE_TASKS = (
    "Find me flights from Boston to Lisbon on Nov 10. Book a hotel there under 180 a night. "
    "What will the weather be in Lisbon that week?"
)


@pytest.mark.parametrize("path", ["openai", "text"])
def test_a_session_s_needs_count_the_tasks_its_message_states(path: str) -> None:
    """One question needs about one tool, which the opening holds: the 24 tools stay selected.
    Three requests need three, more than the opening holds, and the same catalog loads whole
    (a flat two needs kept both selected natively and loaded both whole on the text path)."""
    planner = _planner(_trips(), path=path)
    assert planner._needs([ONE_TASK]) == pytest.approx(1 + LATER_NEEDS)
    assert planner._needs([THREE_TASKS]) == pytest.approx(3 + LATER_NEEDS)
    assert planner.plan(_state(), [ONE_TASK], initial=True).mode == "selected"
    assert planner.plan(_state(), [THREE_TASKS], initial=True).mode == "all"
