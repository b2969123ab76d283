"""Everyday phrasing picks the tools it asks for, not the ones that share a filler with it.

A newcomer's 22 tools (``newcomer_tools.py``) and the demo catalog: the ``s`` of "It's" matched
the one description with "user's", "tomorrow" matched every tool that mentions tomorrow, and a
short first sentence ("Not yet.") counted as a task of its own.
"""

from __future__ import annotations

import pytest
from newcomer_tools import TOOLS

from tooltray.memory.retrieval import ToolIndex
from tooltray.memory.retrieval.scoring import segments, terms
from tooltray.tools import ToolRegistry
from tooltray.tools.demo import demo_script, load_demo_catalog


@pytest.fixture(scope="module")
def newcomer() -> ToolIndex:
    registry = ToolRegistry()
    for fn in TOOLS:
        registry.register_callable(fn)
    return ToolIndex(registry.allowed())  # lexical: the side these phrasings misled


def lexical(index: ToolIndex, query: str) -> dict[str, float]:
    scored, _ = index.score(query, "lexical")
    return {n: float(z) for n, z in zip(index.names, scored.lexical_z, strict=True)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It's freezing in here", ["freezing"]),
        ("What's up", []),
        ("the user's calendar", ["user", "calendar"]),
        ("don't stop", ["stop"]),
        ("What\u2019s the weather in Oslo?", ["weather", "oslo"]),
        ("O'Brien's files", ["o", "brien", "file"]),
    ],
)
def test_clitics_and_fillers_are_not_terms(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


def test_a_possessive_in_one_description_does_not_win_a_request(newcomer: ToolIndex) -> None:
    z = lexical(newcomer, "It's freezing in here, warm the house up and put on some jazz")
    assert z["create_calendar_event"] <= 0.0
    assert max(lexical(newcomer, "What's up").values()) <= 0.0


def test_a_day_named_in_a_request_matches_no_tool(newcomer: ToolIndex) -> None:
    z = lexical(newcomer, "What is on my agenda tomorrow?")
    assert z["get_weather"] <= 0.0 and z["order_pizza"] <= 0.0


def test_the_demo_weather_question_matches_no_calendar_tool() -> None:
    specs, _ = load_demo_catalog()
    index = ToolIndex(specs)
    z = lexical(index, "What's the weather in Oslo?")
    assert z["calendar_respond_invite"] <= 0.0
    assert max(z, key=lambda n: z[n]).startswith("weather_")


def test_a_short_first_sentence_joins_the_next() -> None:
    text = "Not yet. What will the weather be like there that week? And find me a hotel."
    assert segments(text) == [
        "Not yet. What will the weather be like there that week?",
        "And find me a hotel.",
    ]
    assert segments("Yes. No.") == ["Yes. No."]


def test_the_demo_second_turn_loads_weather_and_hotels_not_files(demo_index: ToolIndex) -> None:
    text = demo_script()[1]["user"]
    assert text.startswith("Not yet.")
    picked = [h.name for h in demo_index.picks(text)]
    assert "travel_search_hotels" in picked and "weather_forecast" in picked
    assert not [n for n in picked if n.startswith("files_")]
