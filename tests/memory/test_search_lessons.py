"""What a turn's searches led to (``led_to``), on hand-made searches and uses."""

from __future__ import annotations

import numpy as np

from tooltray.memory.config import Settings
from tooltray.memory.learning.lessons import Embedded, led_to, lesson

VECTOR: Embedded = ("e", np.array([1.0, 0.0], np.float32))


def vector_of(query: str) -> Embedded | None:
    return None if query == "unembedded" else VECTOR


def test_each_search_takes_the_used_tools_that_came_after_it() -> None:
    """Search A, call A, search B, call B: A to the first, B to the second; a tool known when
    a search was asked (loaded before it) is not what it led to."""
    searches = [("find a", frozenset({"core"})), ("find b", frozenset({"core", "a", "a2"}))]
    led = led_to(searches, ["core", "a", "b"], vector_of)
    assert [(q, tools) for q, _, tools in led] == [("find a", ("a",)), ("find b", ("b",))]


def test_two_searches_then_two_calls_give_each_search_what_its_answer_loaded() -> None:
    """The first search's answer loaded ``a`` before the second was asked; both are called
    after the second search."""
    searches = [("find a", frozenset()), ("find b", frozenset({"a"}))]
    led = led_to(searches, ["a", "b"], vector_of)
    assert [(q, tools) for q, _, tools in led] == [("find a", ("a",)), ("find b", ("b",))]


def test_a_search_that_led_nowhere_or_has_no_vector_teaches_nothing() -> None:
    searches = [("unembedded", frozenset()), ("too late", frozenset({"a", "b"}))]
    assert led_to(searches, ["a", "b"], vector_of) == []
    assert led_to([], ["a"], vector_of) == []


def test_the_lesson_keeps_query_text_only_when_asked() -> None:
    searched = [("find a", VECTOR, ("a",))]
    kept = lesson(Settings(db="sqlite://", learn_keep_text=True), 1, ["a"], None, None, searched)
    plain = lesson(Settings(db="sqlite://"), 1, ["a"], None, None, searched)
    assert kept is not None and plain is not None
    assert [(s.tools, s.text, s.embedder_id) for s in kept.searches] == [(("a",), "find a", "e")]
    assert plain.searches[0].text is None
    assert plain.searches[0].vector == VECTOR[1].tobytes()
