"""The decision rules on hand-made scores: no embedder, no store, no trinket.

``core/policy.py`` sees names, scores and token counts only, so a boundary's priced opening and
its "every tool or the selection" decision are checked here from picks written by hand.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tooltray.memory.core.policy import (
    EXPECTED,
    LATENCY,
    PRICE,
    Profile,
    Session,
    eager_wins,
    everything,
    held_picks,
    later_needs,
    opening,
    priced,
)
from tooltray.memory.embedders import default_embedder
from tooltray.memory.retrieval.scoring import Candidate
from tooltray.memory.tuning import LATER_NEEDS, needed

PICKS = [
    Candidate("hotels", "semantic", 4.0),
    Candidate("flights", "semantic", 3.6),
    Candidate("cars", "semantic", 1.2),
    Candidate("weather", "semantic", 0.4),
]
TOKENS = {"hotels": 120, "flights": 140, "cars": 400, "weather": 90}
SESSION = Session(calls=6, context=2000, answer=150)
pytestmark = pytest.mark.no_embedder


def test_picks_are_priced_best_first_by_their_chance_of_being_needed() -> None:
    rows = priced(list(reversed(PICKS)), TOKENS, PRICE)
    assert [c.name for c, *_ in rows] == ["hotels", "flights", "cars", "weather"]
    assert [t for _, t, _, _ in rows] == [120, 140, 400, 90]
    assert [n for _, _, n, _ in rows] == [needed(c.score or 0.0, 4.0) for c in PICKS]
    assert rows[0][3], "the best pick is always worth holding"


def test_the_price_profile_holds_fewer_picks_than_the_latency_one() -> None:
    price, latency = (opening(PICKS, TOKENS, p, share=False) for p in (PRICE, LATENCY))
    assert 0 < len(price.held) < len(latency.held)
    assert price.tokens == sum(TOKENS[c.name] for c in price.held)
    assert price.missed > latency.missed and price.kept < latency.kept


def test_the_share_opening_holds_every_pick_and_prices_none() -> None:
    shared = opening(PICKS, TOKENS, PRICE, share=True)
    assert shared.held == PICKS and shared.tokens == 0 and shared.missed == 0.0


def test_every_tool_wins_only_when_it_costs_less_than_the_selection_and_its_escapes() -> None:
    opened = opening(PICKS, TOKENS, LATENCY, share=False)
    assert everything(600, 500, opened, 3.0, LATENCY)
    assert not everything(20_000, 500, opened, 1.0, LATENCY)
    assert EXPECTED.calls > 1


def test_later_needs_move_from_the_prior_towards_history() -> None:
    assert later_needs(0.0, 0.0, 0) == LATER_NEEDS
    assert later_needs(3.0, 2.0, 10_000) == pytest.approx(1.0, abs=0.01)
    assert later_needs(2.0, 2.0, 200) < LATER_NEEDS


def test_the_policy_imports_no_store_journal_events_or_trinket() -> None:
    path = Path(__file__).resolve().parents[2] / "memory" / "core" / "policy.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    banned = ("memory.store", "events", "core.session", "core.trinket", "core.planner")
    assert not [m for m in imported if any(b in m for b in banned)], imported


def test_holding_and_escaping_by_hand() -> None:
    # price: held = 100 x 1.25 + 100 x 0.1 x 5 = 175; escape = 200 + 187.5 + 250 = 637.5
    assert PRICE.held(100, 6) == pytest.approx(175.0)
    assert PRICE.escape(2000, 150) == pytest.approx(637.5)
    # latency: held = 0.1 s of prefill; escape = 0.15 s of answer + 1.7 s of decoding
    assert LATENCY.held(100, 6) == pytest.approx(0.1)
    assert LATENCY.escape(2000, 150) == pytest.approx(1.85)
    picks = [(100, 0.72), (100, 0.2), (400, 0.2), (100, 0.06)]
    assert held_picks(picks, PRICE, SESSION) == [True, False, False, False]
    # latency: 0.2 x 1.85 = 0.37 s saved < 0.4 s to prefill 400 tokens: the large one stays out
    assert held_picks(picks, LATENCY, SESSION) == [True, True, False, True]
    assert not eager_wins(5000, 800, 1.0, PRICE, SESSION)
    assert eager_wins(900, 800, 1.0, PRICE, SESSION)


def _largest_whole(profile: Profile, tasks: int) -> int:
    """The largest catalog (eager tokens, in steps of 250) the boundary loads whole over PICKS
    when the message states ``tasks`` tasks and the fixed part is 500 tokens."""
    opened = opening(PICKS, TOKENS, profile, share=False)
    held, needs = 500 + opened.tokens, tasks + LATER_NEEDS
    whole = [e for e in range(250, 20_000, 250) if everything(e, held, opened, needs, profile)]
    assert whole == list(range(250, whole[-1] + 1, 250)), "a smaller catalog also loads whole"
    return whole[-1]


def test_more_stated_tasks_and_dearer_escapes_load_larger_catalogs_whole() -> None:
    """What the planner shows on real catalogs (tests/memory/test_priced_opening.py), as the
    rule: three stated tasks load a larger catalog whole than one; an escape is cheap beside
    holding every tool under the price profile, so it loads whole less than latency."""
    for profile in (PRICE, LATENCY):
        assert _largest_whole(profile, 1) < _largest_whole(profile, 3)
    assert _largest_whole(PRICE, 3) < _largest_whole(LATENCY, 3)


def test_this_module_runs_with_the_embedder_refused() -> None:
    """The guard that keeps these rule tests off the model: embedding here fails the test."""
    with pytest.raises(AssertionError, match="no_embedder"):
        default_embedder().embed(["flights to Lisbon"])


def test_a_larger_catalog_lowers_each_picks_odds_and_never_raises_them() -> None:
    from tooltray.memory.tuning import NEEDED_TOOLS, at_size

    assert at_size(0.72, NEEDED_TOOLS) == 0.72 and at_size(0.72, 20) == 0.72  # the measured size
    ten = at_size(0.5, 10 * NEEDED_TOOLS)  # even odds, a catalog ten times larger: odds 1:10
    assert ten == pytest.approx(1 / 11)
    chances = [at_size(0.35, n) for n in (130, 255, 1323, 5000)]
    assert chances == sorted(chances, reverse=True) and chances[-1] > 0.0
    assert needed(5.0, 5.0, 1323) == at_size(needed(5.0, 5.0), 1323)


def test_on_a_large_catalog_the_opening_holds_fewer_picks() -> None:
    for profile in (PRICE, LATENCY):
        small = opening(PICKS, TOKENS, profile, share=False, size=100)
        large = opening(PICKS, TOKENS, profile, share=False, size=1323)
        assert small.held == opening(PICKS, TOKENS, profile, share=False).held
        assert {c.name for c in large.held} < {c.name for c in small.held}
        assert large.tokens < small.tokens
    # held by price on a 1,323-tool catalog: none of these picks pays for its tokens
    assert opening(PICKS, TOKENS, PRICE, share=False, size=1323).held == []
