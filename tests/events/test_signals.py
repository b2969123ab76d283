"""The namespace, its hyphenated signals, typed payloads, and sessions that never cross."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tooltray import events as ev


def test_every_signal_is_hyphenated_and_has_a_payload_model() -> None:
    names = set(ev.tooltray_signals)
    assert names == set(ev.PAYLOADS)
    assert {"turn-completed", "tool-used", "loader-degraded", "escape-hatch"} <= names
    assert all("_" not in n for n in names)


def test_message_count_is_not_a_turn() -> None:
    """A turn is a user turn: a message count (tool calls included) never becomes one."""
    assert ev.TurnCompleted(message_count=5).turn == 0
    assert ev.TurnCompleted(turn=7, message_count=1).turn == 7


def test_payloads_reject_bad_values() -> None:
    with pytest.raises(ValidationError):
        ev.TurnCompleted(turn=-1)
    with pytest.raises(ValidationError):
        ev.ToolUsed(tool="x", surprise=1)  # type: ignore[call-arg]


def test_emit_checks_the_payload_type() -> None:
    with pytest.raises(TypeError, match="TurnCompleted"):
        ev.emit(ev.turn_completed, "s", ev.ToolUsed(tool="x"))


def test_sessions_side_by_side_do_not_cross() -> None:
    heard: list[tuple[str, int]] = []

    def receiver(sender: Any, payload: ev.TurnCompleted, **_: Any) -> None:
        heard.append((sender, payload.turn))

    with ev.turn_completed.connected_to(receiver, sender="a"):
        ev.emit(ev.turn_completed, "a", ev.TurnCompleted(turn=1))
        ev.emit(ev.turn_completed, "b", ev.TurnCompleted(turn=2))
        ev.emit(ev.turn_completed, "a", ev.TurnCompleted(turn=3))
    assert heard == [("a", 1), ("a", 3)]
