"""A session boundary is one priced decision: every tool, an opening set, or CORE alone.

The arithmetic by hand for both profiles, then the planner on real catalogs with the real
embedder: a catalog smaller than selection's fixed part loads whole, a large one opens with the
picks worth holding, and the price profile holds fewer than the latency one.
"""

from __future__ import annotations

import pytest

from tooltray.memory.config import Settings
from tooltray.memory.core import price
from tooltray.memory.core.planner import Planner
from tooltray.memory.core.session import SessionState
from tooltray.memory.store.rules import empty_snapshot
from tooltray.tools.demo import demo_registry
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec

SESSION = price.Session(calls=6, context=2000, answer=150)
TRIP = "Find me flights from Boston to Lisbon on Nov 10 and a hotel there under 180 a night."


def test_holding_and_escaping_by_hand() -> None:
    # price: held = 100 x 1.25 + 100 x 0.1 x 5 = 175; escape = 200 + 187.5 + 250 = 637.5
    assert price.PRICE.held(100, 6) == pytest.approx(175.0)
    assert price.PRICE.escape(2000, 150) == pytest.approx(637.5)
    # latency: held = 0.1 s of prefill; escape = 0.15 s of answer + 1.7 s of decoding
    assert price.LATENCY.held(100, 6) == pytest.approx(0.1)
    assert price.LATENCY.escape(2000, 150) == pytest.approx(1.85)
    picks = [(100, 0.72), (100, 0.2), (400, 0.2), (100, 0.06)]
    assert price.held_picks(picks, price.PRICE, SESSION) == [True, False, False, False]
    # latency: 0.2 x 1.85 = 0.37 s saved < 0.4 s to prefill 400 tokens: the large one stays out
    assert price.held_picks(picks, price.LATENCY, SESSION) == [True, True, False, True]
    assert not price.eager_wins(5000, 800, 1.0, price.PRICE, SESSION)
    assert price.eager_wins(900, 800, 1.0, price.PRICE, SESSION)


def _planner(registry: ToolRegistry, **settings: object) -> Planner:
    return Planner(registry, Settings(context_window=8192, **settings))


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
    assert opened["price"][0] == opened["latency"][0] == "travel_search_hotels"


def test_the_share_opening_keeps_its_caps() -> None:
    plan = _planner(demo_registry(), opening="share", max_tools=3).plan(
        _state(), [TRIP], initial=True
    )
    picked = [c for c in plan.loads if c.source not in ("core", "pinned")]
    assert plan.mode == "selected" and len(picked) == 3
