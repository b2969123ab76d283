"""``trinket.follow``: what a called tool points to next, for a client that sends no user text
between calls (the MCP gateway): learned companions and the tool's own text, append-only."""

from __future__ import annotations

from tooltray.memory.core.trinket import ToolLoaderTrinket

from .conftest import MakeTrinket, finish_turn

SELECTING = {"activation_share": 0.0}  # selection on, whatever the catalog's size


def call(trinket: ToolLoaderTrinket, sid: str, tool: str) -> list[str]:
    """One forwarded call as the gateway reports it (a turn per call), then its follow-up."""
    turn = trinket.state(sid).turn
    finish_turn(sid, turn + 1, [tool])
    return trinket.follow(sid, [tool])[0]


def test_a_call_appends_its_tools_text_matches_and_never_the_denied(
    make_trinket: MakeTrinket,
) -> None:
    trinket = make_trinket(**SELECTING, deny=["weather_alerts"])
    trinket.prepare("s", [])
    before = trinket.loaded("s")
    added = call(trinket, "s", "weather_forecast")
    after = trinket.loaded("s")
    assert after[: len(before)] == before and set(added) <= set(after)
    assert "weather_current" in added  # its text is the forecast's nearest
    assert "weather_alerts" not in after
    assert not any(n.startswith(("email_", "git_")) for n in added)


def test_history_brings_what_followed_the_tool_in_past_sessions(make_trinket: MakeTrinket) -> None:
    trinket = make_trinket(**SELECTING)
    for past in ("p1", "p2"):
        trinket.prepare(past, [])
        for tool in ("weather_forecast", "calendar_create_event", "weather_forecast"):
            call(trinket, past, tool)
    trinket.prepare("now", [])
    added = call(trinket, "now", "weather_forecast")
    assert "calendar_create_event" in added  # no text links them: only the past sessions do


def test_nothing_follows_where_selection_is_off(make_trinket: MakeTrinket) -> None:
    never = make_trinket(**SELECTING, growth="never")
    never.prepare("n", [])
    assert call(never, "n", "weather_forecast") == []
    everything = make_trinket(activation_share=1.0, opening="share")  # all fit: all loaded
    everything.prepare("a", [{"role": "user", "content": "what is the weather in Oslo?"}])
    assert everything.state("a").selection_mode == "all"
    assert call(everything, "a", "weather_forecast") == []
