"""Conversation scores: decay over task messages only, the best weighted score, growth rules."""

from __future__ import annotations

import numpy as np

from tooltray.memory.retrieval import selector
from tooltray.memory.retrieval.index import Bundles


def msg(*scores: float) -> selector.Row:
    return np.asarray(scores, dtype=np.float64)


def conv(*messages: selector.Row) -> selector.Rows:
    """The conversation's message rows, oldest first."""
    return np.vstack(messages)


def test_follow_ups_do_not_age_the_request_but_later_tasks_do() -> None:
    request, follow_up, task = msg(6.0, 0.0, 0.0), msg(1.0, 1.2, 0.5), msg(0.0, 5.0, 0.0)
    assert selector.weights(conv(request, follow_up, follow_up)) == [1.0, 1.0, 1.0]
    assert selector.weights(conv(request, task, follow_up)) == [selector.DECAY, 1.0, 1.0]


def test_a_tool_matched_by_an_earlier_request_stays_a_candidate_after_a_follow_up() -> None:
    combined = selector.combine(conv(msg(6.0, 0.0, -1.0), msg(0.5, 1.0, 0.2)))
    assert int(np.argmax(combined)) == 0
    assert combined[0] == 6.0
    after_task = selector.combine(conv(msg(6.0, 0.0, -1.0), msg(0.0, 5.0, 0.0)))
    assert after_task[0] == selector.DECAY * 6.0 and int(np.argmax(after_task)) == 1


def test_past_votes_join_on_the_calibrated_scale() -> None:
    base = selector.combine(conv(msg(3.0, 2.9, 0.0)))
    votes = selector.vote_row({"b": 1.0, "unknown": 1.0}, {"a": 0, "b": 1, "c": 2}, 3)
    assert votes is not None and votes.tolist() == [0.0, 1.0, 0.0]
    assert int(np.argmax(selector.combine(conv(msg(3.0, 2.9, 0.0)), votes))) == 1
    assert int(np.argmax(base)) == 0
    assert selector.vote_row({}, {"a": 0}, 1) is None


def test_growth_takes_strong_unloaded_tools_and_accumulated_evidence() -> None:
    score = np.array([6.0, 5.5, 1.0, 0.0])
    assert selector.growth(score, np.zeros(4), loaded=[0]) == [1]
    assert selector.growth(score, np.zeros(4), loaded=[0, 1]) == []
    twice = conv(msg(0.0, 0.0, 2.1, 0.0), msg(0.0, 0.0, 2.1, 0.0))  # two follow-ups (< 2.2)
    single = selector.combine(twice)
    assert selector.growth(single, np.zeros(4), loaded=[]) == []
    assert selector.growth(single, selector.evidence(twice), loaded=[]) == [2]


def test_growth_needs_support_from_the_current_message() -> None:
    score = np.array([6.0, 5.5, 1.0])
    assert selector.growth(score, np.zeros(3), loaded=[0], current=np.array([0.0, 0.5, 0.0])) == []
    assert selector.growth(score, np.zeros(3), loaded=[0], current=np.array([0.0, 1.5, 0.0])) == [1]


def test_a_new_task_grows_on_the_messages_own_scores() -> None:
    backed = np.full(5, 2.0)
    own = np.array([5.2, 3.9, 3.2, 1.0, 2.3])  # tool 0 loaded (the earlier request's)
    assert selector.new_task(own, backed, loaded=[0]) == [1, 2]  # 3.2 >= 0.7 x 3.9 and 0.6 x 5.2
    assert selector.new_task(own, backed, loaded=[0, 2]) == [1]  # 2.3 < 0.6 x 5.2
    assert selector.new_task(own, backed, loaded=[0, 1]) == []  # the best two are loaded


def test_a_distant_runner_up_of_a_loaded_tool_is_no_new_task() -> None:
    backed = np.full(3, 2.0)
    own = np.array([6.3, 3.3, 0.5])  # "resolve the ticket": create_ticket trails at 0.52 x top
    assert selector.new_task(own, backed, loaded=[0]) == []
    assert selector.new_task(own, backed, loaded=[]) == [0]


def test_a_new_task_needs_the_messages_support_and_the_bar() -> None:
    own = np.array([4.0, 3.5, 2.1])
    assert selector.new_task(own, np.array([0.5, 0.5, 2.0]), loaded=[]) == []  # 2.1 < FRESH_BAR
    assert selector.new_task(own, np.array([2.0, 0.5, 2.0]), loaded=[]) == [0]


def test_a_new_tasks_closest_bundle_mates_come_along() -> None:
    bundles = Bundles(["msg", "msg", "msg", "msg", None])
    own = np.array([3.1, 2.2, 1.5, 0.4, 3.0])
    assert selector.fresh_mates([0], own, bundles, loaded=[]) == [1, 2]  # 0.4 under the floor
    assert selector.fresh_mates([0], own, bundles, loaded=[1]) == [2]
    assert selector.fresh_mates([4], own, bundles, loaded=[]) == []  # no bundle
