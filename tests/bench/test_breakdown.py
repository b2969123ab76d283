"""The session bench's price breakdown: its parts add up to the price ``peers`` charges."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import breakdown  # noqa: E402
import peers  # noqa: E402
from corpora import Conversation, Turn  # noqa: E402
from pricing import PROFILES, price_session  # noqa: E402

PREFIX = [["meta", 100], ["tool-a", 300], ["system", 400]]
GROWN = [["meta", 100], ["tool-a", 300], ["tool-b", 250], ["system", 400]]


@pytest.fixture(autouse=True)
def labels() -> None:
    breakdown.LABELS.clear()
    breakdown.LABELS.update(
        {"meta": "fixed", "system": "fixed", "tool-a": "held", "tool-b": "held"}
    )


def test_the_parts_add_up_to_the_sessions_price_and_name_each_escape() -> None:
    conv = Conversation("c", (Turn("book it", ("a", "b")), Turn("and pay", ("c",), ("book it",))))
    calls = [
        [
            ["tool", "a", PREFIX],
            ["escape", "Loaded: b. " + "b " * 200, PREFIX],
            ["tool", "b", GROWN],
            ["final", "", GROWN],
        ],
        [["escape", "Too many tools; names", GROWN], ["escape", "Loaded: c.", GROWN]]
        + [["tool", "c", GROWN], ["final", "", GROWN]],
    ]
    kinds = [["query"], ["fallback", "name"]]
    notes = ["", "Tools now available: c"]
    played = breakdown.play(conv, calls, kinds, notes)
    reference = peers.play_tooltray(conv, calls, notes)
    for profile in PROFILES:
        parts = breakdown.charge(played, profile)
        total = price_session(reference.transcript.calls, profile).cost
        assert sum(parts.values()) == pytest.approx(total)
        assert parts["held"] > 0 and parts["fixed"] > 0 and parts["answer:query"] > 0
        assert parts["note"] > 0 and parts["answer:fallback"] > 0 and parts["answer:name"] > 0
    price = breakdown.charge(played, PROFILES[0])
    assert {"output:query", "output:fallback", "output:name"} <= set(price)
    counts = breakdown.breakdown([conv], {"c": calls}, {"c": kinds}, {"c": notes})["calls"]
    assert counts == {
        "tool": 3,
        "final": 2,
        "escape:query": 1,
        "escape:fallback": 1,
        "escape:name": 1,
    }
