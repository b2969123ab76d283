"""A catalog of two tools (``mcp-server-time`` alone): the obvious match comes first.

Over two tools every z-score used to be +-1, so a cosine gap of 0.013 (0.382 against 0.395)
outweighed a clear BM25 match and "what is the current time in Tokyo" picked ``convert_time``
only. On catalogs under 16 tools the spread is now pooled with a prior.
"""

from __future__ import annotations

import numpy as np
import pytest

from tooltray.memory.embedders import default_embedder
from tooltray.memory.retrieval import ToolIndex
from tooltray.memory.retrieval.scoring import zscores
from tooltray.tools.spec import ToolSpec

UTC = "Use 'UTC' as local timezone if no {}timezone provided by the user."
TIME_ROWS = [  # what mcp-server-time lists (tools/list), word for word
    ("get_current_time", "Get current time in a specific timezone", {
        "timezone": ("IANA timezone name (e.g., 'America/New_York', 'Europe/London'). "
                     + UTC.format(""), "Timezone"),
    }),
    ("convert_time", "Convert time between timezones", {
        "source_timezone": ("Source IANA timezone name (e.g., 'America/New_York', "
                            "'Europe/London'). " + UTC.format("source "), "Source Timezone"),
        "time": ("Time to convert in 24-hour format (HH:MM)", "Time"),
        "target_timezone": ("Target IANA timezone name (e.g., 'Asia/Tokyo', "
                            "'America/San_Francisco'). " + UTC.format("target "),
                            "Target Timezone"),
    }),
]  # fmt: skip
TIME_TOOLS = [
    ToolSpec(
        name=name,
        description=text,
        parameters={
            "properties": {
                k: {"description": d, "title": t, "type": "string"} for k, (d, t) in props.items()
            },
            "required": list(props),
            "type": "object",
            "title": f"{name}Arguments",
        },
        bundle="time",
    )
    for name, text, props in TIME_ROWS
]


@pytest.fixture(scope="module")
def time_index() -> ToolIndex:
    return ToolIndex(TIME_TOOLS, default_embedder())


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("what is the current time in Tokyo", "get_current_time"),
        ("what time is it in Paris right now", "get_current_time"),
        ("convert 3pm New York time to Tokyo time", "convert_time"),
    ],
)
def test_the_obvious_match_comes_first_on_two_tools(
    time_index: ToolIndex, query: str, first: str
) -> None:
    assert time_index.picks(query)[0].name == first
    assert time_index.search(query, 2)[0].name == first


def test_a_tiny_gap_stays_small_and_a_large_catalog_keeps_its_own_spread() -> None:
    assert np.abs(zscores(np.array([0.382, 0.395]))).max() < 0.2  # not +-1
    assert np.abs(zscores(np.array([0.645, 0.369]))).max() > 0.9
    rng = np.random.default_rng(7)
    row = rng.normal(0.2, 0.08, 2000)
    plain = (row - row.mean()) / row.std()
    assert np.array_equal(zscores(row), plain)  # large catalogs: the plain z-score
    assert np.allclose(zscores(3.0 * row), zscores(row))  # a positive scale changes nothing
