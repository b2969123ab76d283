"""The trinket's lifecycle rules with the real embedder, the demo catalog and a real store."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tooltray.events import (
    EscapeHatch,
    LoaderDegraded,
    context_compacted,
    escape_hatch,
    loader_degraded,
    tool_used,
    turn_completed,
)
from tooltray.memory.metatools.meta_tools import META_TOOL_NAMES
from tooltray.memory.store import Store
from tooltray.tools.errors import EmbedderError

from .conftest import MakeTrinket, finish_turn, user

TRIP = "Find me flights from Boston to Lisbon on Nov 10 and a hotel there under 180 a night."
CODE = "The parse_range test is failing: read src/dates.py and fix the off-by-one bug."


def _hist(*texts: str) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for t in texts:
        out += [user(t), {"role": "assistant", "content": "ok"}]
    return out[:-1]


def test_start_loads_core_then_picks_with_sources_and_caps(make_trinket: MakeTrinket) -> None:
    trinket = make_trinket(max_tools=8, opening="share")  # the caps of the share rule
    view = trinket.prepare("s1", _hist(TRIP))
    snap = trinket.state("s1").snapshot
    names = snap.names()
    assert set(names[:4]) == {"memory_recall", "memory_save", "web_search", "math_evaluate"}
    assert {t.source for t in snap.loaded[:4]} == {"core"}
    picked = [t for t in snap.loaded if t.source not in ("core", "pinned")]
    assert 0 < len(picked) <= 8
    assert "travel_search_flights" in names
    assert all(t.score is not None for t in picked)
    assert [s.name for s in view.specs][:2] == ["load_tools", "call_tool"]
    assert view.tool_tokens < view.eager_tokens / 3
    assert snap.turn == 1


def test_later_turns_only_append_and_prefix_is_stable_when_nothing_changes(
    make_trinket: MakeTrinket,
) -> None:
    trinket = make_trinket(growth="never")
    first = trinket.prepare("s", _hist(TRIP))
    finish_turn("s", 1, ["travel_search_flights"])
    again = trinket.prepare("s", _hist(TRIP, "Thanks, that is all for flights."))
    assert again.system_prefix == first.system_prefix
    assert again.tools() == first.tools()
    assert again.prefix_hash == first.prefix_hash
    grow = make_trinket(growth="on_strong_match")
    a = grow.prepare("g", _hist(TRIP))
    before = list(a.loaded)
    b = grow.prepare("g", _hist(TRIP, CODE))
    assert list(b.loaded[: len(before)]) == before
    assert any(n.startswith("files_") for n in b.loaded[len(before) :])


def test_every_turn_records_the_prefix_hash_it_handed_out(make_trinket: MakeTrinket) -> None:
    trinket = make_trinket(growth="never", reveal="prefix")  # a load rewrites the prefix
    hashes = [trinket.prepare("h", _hist(TRIP)).prefix_hash]
    finish_turn("h", 1)
    hashes.append(trinket.prepare("h", _hist(TRIP, "Thanks, that is all.")).prefix_hash)
    trinket.handle_meta("h", "load_tools", {"names": ["git_commit"]})
    hashes.append(trinket.prepare("h", _hist(TRIP, "Thanks, that is all.")).prefix_hash)
    finish_turn("h", 2)
    hashes.append(trinket.prepare("h", _hist(TRIP, "Thanks, that is all.", "And now?")).prefix_hash)
    rows = {r.turn: r.prefix_hash for r in trinket.store.turns("h")}  # type: ignore[union-attr]
    assert hashes[0] == hashes[1] != hashes[2] == hashes[3]
    assert rows == {1: hashes[0], 2: hashes[2], 3: hashes[3]}


def test_load_tools_by_name_bundle_and_query_unknown_and_refused(
    make_trinket: MakeTrinket, registry: Any
) -> None:
    registry.deny = ["shopping_checkout"]
    trinket = make_trinket()
    trinket.prepare("s", _hist(TRIP))
    text = trinket.handle_meta(
        "s", "load_tools", {"tools": ["git", "databse_query", "shopping_checkout"]}
    )
    loaded = trinket.loaded("s")
    assert "git_commit" in loaded and "git_push" in loaded
    assert "did you mean" in text and "database_query" in text
    assert "Refused: shopping_checkout" in text and "shopping_checkout" not in loaded
    text = trinket.handle_meta(
        "s", "load_tools", {"query": "how many rows in the signups table SQL"}
    )
    assert "database_query" in trinket.loaded("s"), text
    kinds = [(e.kind, e.tool) for e in trinket.store.history("s")]  # type: ignore[union-attr]
    assert ("refused", "shopping_checkout") in kinds
    assert ("escape", None) in kinds
    view = trinket.prepare("s", _hist(TRIP))
    assert "shopping_checkout" not in {s.name for s in view.specs}


def test_unload_refuses_core_and_explains_unknown(make_trinket: MakeTrinket) -> None:
    trinket = make_trinket(opening="share")
    trinket.prepare("s", _hist(TRIP))
    text = trinket.handle_meta(
        "s", "unload_tools", {"tools": ["memory_recall", "travel_search_flights", "nope"]}
    )
    assert "Unloaded: travel_search_flights" in text
    assert "Refused: memory_recall" in text and "Not loaded: nope" in text
    assert "memory_recall" in trinket.loaded("s")
    assert "travel_search_flights" not in trinket.loaded("s")
    assert trinket.handle_meta("s", "unload_tools", "garbage{").startswith("Unloaded") is False


def test_fallback_lasts_exactly_one_turn_and_keeps_what_was_used(make_trinket: MakeTrinket) -> None:
    trinket = make_trinket(reveal="prefix")  # the fallback's tools join tools=
    before = trinket.prepare("s", _hist(TRIP)).loaded
    text = trinket.handle_meta("s", "fallback", {})
    assert "this turn only" in text
    during = trinket.prepare("s", _hist(TRIP))
    assert len(during.specs) == len(trinket.registry.allowed()) + len(META_TOOL_NAMES)
    finish_turn("s", 1, ["shopping_track_order"])
    after = trinket.prepare("s", _hist(TRIP, "next"))
    assert list(after.loaded) == list(before) + ["shopping_track_order"]
    assert trinket.state("s").snapshot.loaded[-1].source == "escape"


def test_load_tools_star_is_the_fallback_and_costs_no_schema_of_its_own(
    make_trinket: MakeTrinket,
) -> None:
    trinket = make_trinket(reveal="append", opening="share")  # a selection, not every tool
    before = trinket.prepare("s", _hist(TRIP))
    assert [s.name for s in before.specs[:2]] == ["load_tools", "call_tool"]
    assert (
        "fallback" not in {s.name for s in before.specs} and '["*"]' in before.specs[0].description
    )
    # the demo's 128 tools cost more to list (4.5k tokens) than their names and a round trip by
    # name (tests/memory/test_fallback_directory.py): the answer names them, nothing loads
    assert trinket.catalog.fallback_answer() != "listing"
    heard: list[EscapeHatch] = []
    held = trinket.loaded("s")
    with escape_hatch.connected_to(lambda s, payload: heard.append(payload), sender="s"):
        text = trinket.handle_meta("s", "load_tools", "*")
        assert text.startswith("Too many tools") and "shopping_track_order" in text and not heard
        assert trinket.loaded("s") == held
        trinket.handle_meta("s", "load_tools", {"tools": ["shopping_track_order"]})
    assert heard[-1].kind == "load_tools" and heard[-1].tools == ["shopping_track_order"]
    finish_turn("s", 1, ["shopping_track_order"])
    after = trinket.prepare("s", _hist(TRIP, "next"))
    assert list(after.loaded) == list(before.loaded) + ["shopping_track_order"]


def test_unlisted_call_runs_and_is_then_loaded_as_escape(make_trinket: MakeTrinket) -> None:
    trinket = make_trinket(path="text", opening="share")
    heard: list[EscapeHatch] = []
    with escape_hatch.connected_to(lambda s, payload: heard.append(payload), sender="s"):
        view = trinket.prepare("s", _hist(TRIP))
        assert "maps_directions" not in view.loaded and view.specs == ()
        assert "Tools:" in view.system_prefix and "travel_search_flights(" in view.system_prefix
        finish_turn("s", 1, ["maps_directions"])
    assert trinket.loaded("s")[-1] == "maps_directions"
    assert heard and heard[-1].kind == "unlisted_call"


def test_idle_tools_leave_only_at_boundaries(make_trinket: MakeTrinket, sqlite_url: str) -> None:
    trinket = make_trinket(idle_turns=2, growth="never", opening="share")
    trinket.prepare("s", _hist(TRIP))
    texts = [TRIP]
    for turn in range(1, 6):
        finish_turn("s", turn, ["memory_recall"])
        texts.append(f"small talk {turn}")
        trinket.prepare("s", _hist(*texts))
    assert "travel_search_flights" in trinket.loaded("s")
    evicted = trinket.compact("s")
    assert "travel_search_flights" in evicted and "memory_recall" in trinket.loaded("s")
    kinds = {e.kind for e in trinket.store.history("s")}  # type: ignore[union-attr]
    assert {"evicted", "compacted"} <= kinds
    other = make_trinket(idle_turns=2, growth="never", opening="share")
    other.prepare("r", _hist(TRIP))
    finish_turn("r", 1)
    fresh = make_trinket(idle_turns=2, growth="never", opening="share")
    fresh.start("r", _hist(TRIP, "a", "b", "c"))
    assert "travel_search_flights" not in fresh.loaded("r")


def test_restart_resumes_same_set_turn_and_prefix_bytes(make_trinket: MakeTrinket) -> None:
    first = make_trinket()
    first.prepare("s", _hist(TRIP))
    first.handle_meta("s", "load_tools", {"tools": ["git_commit"]})
    finish_turn("s", 1, ["travel_search_flights"])
    view = first.prepare("s", _hist(TRIP, CODE))
    first.close()
    second = make_trinket()
    again = second.prepare("s", _hist(TRIP, CODE))
    assert again.loaded == view.loaded
    assert again.system_prefix == view.system_prefix and again.tools() == view.tools()
    assert again.prefix_hash == view.prefix_hash
    assert second.state("s").turn == 2


def test_two_sessions_interleaved_do_not_cross(make_trinket: MakeTrinket) -> None:
    trinket = make_trinket()
    trinket.prepare("a", _hist(TRIP))
    trinket.prepare("b", _hist(CODE))
    finish_turn("a", 1, ["weather_forecast"])
    finish_turn("b", 1, ["git_status"])
    a, b = trinket.loaded("a"), trinket.loaded("b")
    assert "weather_forecast" in a and "weather_forecast" not in b
    assert "git_status" in b and "git_status" not in a
    assert any(n.startswith("travel_") for n in a) and any(n.startswith("files_") for n in b)


def test_off_states_expose_every_allowed_tool_exactly(
    make_trinket: MakeTrinket, registry: Any
) -> None:
    from tooltray.tools.render import render_openai_chat

    view = make_trinket(enabled=False).prepare("s", _hist(TRIP))
    assert view.tools() == render_openai_chat(registry.allowed())
    assert view.mode == "disabled"
    assert not any(s.name in META_TOOL_NAMES for s in view.specs)


def test_embedder_down_degrades_to_all_tools_logs_once_and_records(
    make_trinket: MakeTrinket, registry: Any, caplog: pytest.LogCaptureFixture
) -> None:
    trinket = make_trinket()

    def down(*_: Any, **__: Any) -> Any:
        raise EmbedderError("embedding server at http://127.0.0.1:9 is down: start it")

    trinket.catalog.selector = down  # type: ignore[method-assign]
    heard: list[LoaderDegraded] = []
    listen = loader_degraded.connected_to(lambda s, payload: heard.append(payload), sender="s")
    with listen, caplog.at_level(logging.ERROR, logger="tooltray"):
        view = trinket.prepare("s", _hist(TRIP))
        trinket.prepare("s", _hist(TRIP, CODE))
    assert view.mode == "degraded" and len(view.specs) == len(registry.allowed())
    assert len([r for r in caplog.records if "down" in r.getMessage()]) == 1
    assert len(heard) == 1
    assert "degraded" in {e.kind for e in trinket.store.history("s")}  # type: ignore[union-attr]


def test_small_catalog_loads_everything(make_trinket: MakeTrinket) -> None:
    view = make_trinket(context_window=400_000, opening="share").prepare("s", _hist(TRIP))
    assert view.mode == "all" and len(view.loaded) == len(make_trinket().registry.allowed())


def test_store_unreachable_keeps_turn_alive_and_replays(
    make_trinket: MakeTrinket, tmp_path: Any
) -> None:
    trinket = make_trinket()
    trinket.prepare("s", _hist(TRIP))
    store = trinket.store
    assert isinstance(store, Store)
    real = store.apply

    def broken(*_: Any, **__: Any) -> Any:
        from tooltray.tools.errors import StoreError

        raise StoreError("database is unreachable")

    store.apply = broken  # type: ignore[method-assign]
    text = trinket.handle_meta("s", "load_tools", {"tools": ["git_commit"]})
    assert "git_commit" in text and "git_commit" in trinket.loaded("s")
    assert trinket.state("s").pending
    store.apply = real  # type: ignore[method-assign]
    finish_turn("s", 1)
    assert not trinket.state("s").pending
    assert "git_commit" in (store.snapshot("s").names())  # type: ignore[union-attr]


def test_growth_after_skipped_prepares_reads_every_new_message(
    make_trinket: MakeTrinket,
) -> None:
    """An agent that did not call prepare on a turn (its reply asked a question) loses nothing:
    the request of that turn still grows at the next prepare, from the stored growth mark."""
    weather = "What's the weather in Paris tomorrow?"
    ask = "Can you also show me the git log of the last commits?"
    trinket = make_trinket()
    trinket.prepare("s", _hist(weather))
    assert "git_log" not in trinket.state("s").snapshot.names()
    trinket.prepare("s", _hist(weather, ask, "Yes please."))
    assert "git_log" in trinket.state("s").snapshot.names()
    other = make_trinket()
    other.prepare("t", _hist(weather))
    other.prepare("t", _hist(weather, ask))
    before = other.state("t").snapshot.names()
    other.prepare("t", _hist(weather, ask, "Yes please."))
    assert "git_log" in before and other.state("t").snapshot.names() == before


def test_two_trinkets_in_one_process_never_act_on_each_others_sessions(
    make_trinket: MakeTrinket, tmp_path: Any
) -> None:
    """Each trinket listens to its own sessions only (blinker's sender filter): a signal for
    another trinket's session reaches no receiver of this one."""
    first = make_trinket()
    second = make_trinket(url=f"sqlite:///{tmp_path / 'second.db'}")
    first.prepare("mine", _hist(TRIP))
    second.prepare("yours", _hist(TRIP))
    for sid, owner in (("mine", first), ("yours", second)):
        for signal in (turn_completed, tool_used, context_compacted):
            assert [r.__self__ for r in signal.receivers_for(sid)] == [owner]
    finish_turn("yours", 1, ["maps_directions"])
    assert "maps_directions" in second.loaded("yours")
    assert first.store.snapshot("yours") is None  # the other trinket's store never heard it
    first.end("mine")
    assert not list(turn_completed.receivers_for("mine"))
