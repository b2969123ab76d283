"""The planner selects from the whole conversation and takes learned signals through a protocol.

Real demo registry and the real embedder: a follow-up that names no task keeps the earlier
request's tool, and a store-like signals object's companions and past-request votes reach the
picks (with ``NoSignals`` nothing learned is used).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from tooltray.memory.config import Settings
from tooltray.memory.core.catalog import AllowedCatalog
from tooltray.memory.learning.usage import Usage
from tooltray.memory.retrieval.selector import (
    NoSignals,
    SessionSignals,
    earlier_tasks,
)
from tooltray.tools.demo import demo_registry

REQUEST = "Show me the git log of the last commits on this repository"
FOLLOW_UP = "Yes, that's correct."
CREDENTIALS = "My email login is dana@example.com and my password for the mail account is hunter2."


class TableSignals:
    """A fixed learned table: what a store with history answers, without the store."""

    def __init__(self, companions: dict[str, float], votes: dict[str, float]) -> None:
        self.table, self.votes = companions, votes
        self.shapes: list[tuple[int, ...]] = []
        self.weights: list[list[float]] = []
        self.sessions: list[str | None] = []

    def companions(self, tools: Sequence[str]) -> dict[str, float]:
        return dict(self.table) if tools else {}

    def past_requests(
        self,
        vectors: NDArray[np.float32],
        weights: Sequence[float] | None = None,
        session: str | None = None,
        fresh: bool = True,
    ) -> dict[str, float]:
        self.shapes.append(vectors.shape)
        self.weights.append(list(weights or []))
        self.sessions.append(session)
        assert weights is not None and len(weights) == len(vectors) and max(weights) == 1.0
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
        return dict(self.votes)

    def past_searches(
        self, vector: NDArray[np.float32], session: str | None = None
    ) -> dict[str, float]:
        """No past search."""
        return {}

    def session_needs(self, growth_miss: float) -> tuple[float, int]:
        """No past session."""
        return 0.0, 0

    def usage(
        self, session: str | None = None, explained: object = None, fresh: bool = True
    ) -> Usage:
        """No past session."""
        return Usage()


@pytest.fixture(scope="module")
def planner() -> AllowedCatalog:
    return AllowedCatalog(demo_registry(), Settings(db="sqlite://", context_window=256))


def names(cands: Sequence[object]) -> list[str]:
    """The tools an answer loads (its mentions, bundles named only, left out)."""
    return [c.name for c in cands if not c.mention]  # type: ignore[attr-defined]


def test_a_follow_up_keeps_the_earlier_requests_tool(planner: AllowedCatalog) -> None:
    selector = planner.selector()
    alone = names(selector.boundary([REQUEST], NoSignals()))
    assert alone[0] == "git_log"
    assert "git_log" in names(selector.boundary([REQUEST, FOLLOW_UP], NoSignals()))
    assert "git_log" not in names(selector.boundary([FOLLOW_UP], NoSignals()))


def test_learned_companions_join_the_picks_and_votes_get_every_message(
    planner: AllowedCatalog,
) -> None:
    signals = TableSignals({"files_read": 0.9, "web_fetch": 0.1}, {"calendar_list_events": 1.0})
    picks = names(planner.selector().boundary([REQUEST, FOLLOW_UP], signals))
    assert "files_read" in picks and "web_fetch" not in picks
    assert "calendar_list_events" in picks
    assert signals.shapes and signals.shapes[-1][0] == 2
    without = names(planner.selector().boundary([REQUEST, FOLLOW_UP], NoSignals()))
    assert "files_read" not in without and "calendar_list_events" not in without


def test_earlier_tasks_are_the_task_messages_before_the_current_one() -> None:
    request = np.array([2.6, 0.1, 0.0])  # "check a reminder": a task, weakly
    follow_up = np.array([0.5, 1.2, 0.3])  # "yes, that's it"
    credentials = np.array([0.0, 0.2, 3.5])  # matches the account tools
    rows = earlier_tasks(np.vstack([request, follow_up, credentials]))
    assert rows.shape == (1, 3) and rows[0][0] == 2.6
    assert earlier_tasks(np.vstack([follow_up])).shape == (0, 3)


def test_the_request_of_a_turn_is_its_first_task_message(planner: AllowedCatalog) -> None:
    planner.selector()
    text, found = planner.request([REQUEST, FOLLOW_UP, CREDENTIALS])
    assert text == REQUEST and found is not None  # its vector comes with it (one selector ask)
    assert np.array_equal(found[1], planner.selector().vector_of(REQUEST)[1])  # type: ignore[index]
    assert planner.request(["sure", "ok"])[0] == "ok"  # no task message: the latest
    assert planner.request([])[0] is None


def test_a_new_task_grows_though_an_earlier_request_holds_the_top(planner: AllowedCatalog) -> None:
    switch = "Switching gears: the parse_range test is failing, open tests/test_parse.py"
    selector = planner.selector()
    loaded = names(selector.boundary([REQUEST], NoSignals()))
    assert not any(n.startswith("files_") for n in loaded)
    grown = names(selector.growth([REQUEST, switch], NoSignals(), loaded))
    assert "files_read" in grown
    assert not set(grown) & set(loaded)


WEATHER = "What's the weather in Paris tomorrow?"
ASK_LOG = "Can you also show me the git log of the last commits?"


def test_growth_judges_every_message_since_the_last_growth(planner: AllowedCatalog) -> None:
    """A request answered with a question loads its tool at the reply ("Yes please.")."""
    selector = planner.selector()
    loaded = names(selector.boundary([WEATHER], NoSignals()))
    users = [WEATHER, ASK_LOG, "Yes please."]
    only_reply = names(selector.growth(users, NoSignals(), loaded, 1))
    both = names(selector.growth(users, NoSignals(), loaded, 2))
    assert "git_log" not in only_reply
    assert "git_log" in both and not set(both) & set(loaded)


def test_growth_takes_the_new_messages_own_past_request_votes(planner: AllowedCatalog) -> None:
    selector = planner.selector()
    loaded = names(selector.boundary([WEATHER], NoSignals()))
    users = [WEATHER, ASK_LOG, "Yes please."]
    signals = TableSignals({}, {"calendar_list_events": 0.9, "web_fetch": 0.2})
    grown = names(selector.growth(users, signals, loaded, 2))
    assert "calendar_list_events" in grown and "web_fetch" not in grown
    assert signals.weights[-1] == [0.0, 1.0, 1.0]  # the two new messages, apart from the first
    assert "calendar_list_events" not in names(selector.growth(users, NoSignals(), loaded, 2))


def test_a_load_tools_query_answers_with_tools_not_loaded_yet(planner: AllowedCatalog) -> None:
    query = "read the file src/dates.py"
    plain = names(planner.search(query))
    assert plain and plain[0].startswith("files_")
    loaded = set(plain[:3])
    fresh = names(planner.search(query, loaded))
    assert len(fresh) >= len(plain) and not set(fresh) & loaded
    assert names(planner.search_lexically(query, loaded)) and not (
        set(names(planner.search_lexically(query, loaded))) & loaded
    )


def test_a_query_whose_best_match_is_loaded_brings_that_tools_siblings(
    planner: AllowedCatalog,
) -> None:
    query = "read the file src/dates.py"
    plain = names(planner.search(query))
    best = plain[0]
    bundle = planner.registry.resolve(best).bundle
    siblings = {s.name for s in planner.registry.allowed() if s.bundle == bundle} - {best}
    without = names(planner.search(query, set(plain[1:])))
    with_best = names(planner.search(query, {best}))
    assert best in without and len(without) <= 5  # the best is not loaded: no siblings
    kin = [n for n in with_best[len(with_best) - 5 :] if n in siblings]
    assert len(with_best) > 5 and len(kin) == 5 and best not in with_best
    scores = {c.name: c.score for c in planner.search(query, {best})}
    assert [scores[n] for n in kin] == sorted((scores[n] for n in kin), reverse=True)


def test_a_session_asks_the_votes_of_every_other_session(planner: AllowedCatalog) -> None:
    inner = TableSignals({"files_read": 0.9}, {"calendar_list_events": 1.0})
    signals = SessionSignals(inner, "s-1")
    picks = names(planner.selector().boundary([REQUEST], signals))
    assert "calendar_list_events" in picks and "files_read" in picks
    assert inner.sessions and set(inner.sessions) == {"s-1"}


def test_a_weak_vote_grows_a_tool_only_when_the_new_messages_match_it(
    planner: AllowedCatalog,
) -> None:
    selector = planner.selector()
    loaded = names(selector.boundary([WEATHER], NoSignals()))
    users = [WEATHER, ASK_LOG, "Yes please."]
    weak = {"git_push": 0.3, "travel_visa_requirements": 0.3, "chat_react": 0.2}
    grown = names(selector.growth(users, TableSignals({}, weak), loaded, 2))
    without = names(selector.growth(users, NoSignals(), loaded, 2))
    assert "git_push" in grown and "git_push" not in without  # matched (own >= 1) and voted
    assert "travel_visa_requirements" not in grown  # voted, but nothing in the messages asks
    assert "chat_react" not in grown  # matched a little, voted too weakly
