"""The session price model on a hand-made three-turn session, computed by hand for each profile.

Prompts are laid out as providers lay them out (tools, system text, messages). Turn 2 starts with
an escape (one more call, its output priced) after which tool B is appended to the end of
``tools=``: tool A before it stays cached, everything from B on is prefilled again.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import corpora  # noqa: E402
import layout  # noqa: E402
import peers  # noqa: E402
import pricing  # noqa: E402
from pricing import LATENCY, PRICE, Call, Segment  # noqa: E402

from tooltray.tools.registry import ToolRegistry  # noqa: E402
from tooltray.tools.spec import ToolSpec  # noqa: E402

pytestmark = pytest.mark.no_embedder  # rules on hand-made numbers (tests/conftest.py)

A, B, S = Segment("tool-a", 100), Segment("tool-b", 200), Segment("system", 20)
U1, U2, U3 = Segment("user-1", 10), Segment("user-2", 10), Segment("user-3", 10)
X1, X2, E = Segment("out-1", 50), Segment("out-2", 50), Segment("escape-answer", 15)

CALLS = [
    Call((A, S, U1), 0),  # turn 1: everything new (130)
    Call((A, S, U1, X1), 0),  # its answer: 130 cached, 50 new
    Call((A, S, U1, X1, U2), 50, "escape"),  # turn 2, escape: 180 cached, 10 new, 50 out
    Call((A, B, S, U1, X1, U2, X2, E), 0),  # B appended: A cached (100), 355 new
    Call((A, B, S, U1, X1, U2, X2, E, U3), 0),  # turn 3: 455 cached, 10 new
]


def test_price_profile_by_hand() -> None:
    # cached * 0.1 + new * 1.25 + output * 5, call by call
    by_hand = [
        0 + 130 * 1.25,
        130 * 0.1 + 50 * 1.25,
        180 * 0.1 + 10 * 1.25 + 50 * 5,
        100 * 0.1 + 355 * 1.25,
        455 * 0.1 + 10 * 1.25,
    ]
    total = pricing.price_session(CALLS, PRICE)
    assert total.cost == pytest.approx(sum(by_hand)) == pytest.approx(1030.25)
    assert (total.cached, total.new, total.output, total.calls) == (865, 555, 50, 5)


def test_latency_profile_by_hand() -> None:
    # cached free, 1,000 new tokens/s, an extra round trip's 50 output tokens in 1.7 s
    by_hand = [0.130, 0.050, 0.010 + 1.7, 0.355, 0.010]
    assert pricing.price_session(CALLS, LATENCY).cost == pytest.approx(sum(by_hand))


def test_appended_tool_keeps_the_tools_before_it_cached() -> None:
    assert pricing.split(CALLS[2].prompt, CALLS[3].prompt) == (100, 355)
    inserted_first = (B, A, S, U1, X1, U2, X2, E)  # the same load written before A
    assert pricing.split(CALLS[2].prompt, inserted_first) == (0, 455)


def _tiny() -> tuple[ToolRegistry, corpora.Conversation]:
    specs = [
        ToolSpec(name="get_weather", description="Weather forecast for a city.", bundle="w"),
        ToolSpec(name="book_taxi", description="Book a taxi to an address.", bundle="t"),
        ToolSpec(name="play_song", description="Play a song by name.", bundle="m"),
    ]
    turns = (
        corpora.Turn("Weather in Oslo?", ("get_weather",)),
        corpora.Turn("Book a taxi home", ("book_taxi",), ("Weather in Oslo?",)),
        corpora.Turn("And tomorrow?", ("get_weather",), ("Weather in Oslo?", "Book a taxi home")),
    )
    return ToolRegistry(specs), corpora.Conversation("c", turns)


def test_peers_make_one_search_per_needed_tool_and_the_oracle_never_changes() -> None:
    registry, conv = _tiny()
    played = peers.play_all(conv, registry, "openai", "Be helpful.", [[], [], []])
    perfect, oracle, eager = played["perfect_search"], played["oracle"], played["eager"]
    assert perfect.searches == 2  # get_weather once (found again later), book_taxi once
    assert len(perfect.transcript.calls) == len(oracle.transcript.calls) + 2 == 8
    # a revealed definition is appended at the end: the search tool's prefix never changes
    first = perfect.transcript.calls[0].prompt[0]
    assert all(c.prompt[0] == first for c in perfect.transcript.calls)
    oracle_tools = {c.prompt[:2] for c in oracle.transcript.calls}
    assert len(oracle_tools) == 1
    assert oracle.transcript.calls[0].prompt[0].tokens > 0
    cost = peers.priced([played])
    for profile in ("price", "latency"):
        assert cost[profile]["oracle/eager"] < 1.0
    calls = eager.transcript.calls  # eager: every later call re-uses the whole previous prompt
    pairs = zip(calls, calls[1:], strict=False)
    reused = [pricing.split(a.prompt, b.prompt)[0] for a, b in pairs]
    assert reused == [sum(s.tokens for s in a.prompt) for a in calls[:-1]]


def test_real_search_runs_pydantic_ais_keyword_search() -> None:
    registry, conv = _tiny()
    search = peers.KeywordSearch(registry.allowed())
    assert search("taxi please", set(), "book_taxi")[0] == "book_taxi"
    assert search("taxi please", {"book_taxi"}, "book_taxi") == ["book_taxi"]  # found ones last
    played = peers.play_all(conv, registry, "text", "Be helpful.", [[], [], []])
    assert played["real_search"].misses == 0
    assert len(layout.system_segments("head\n\nTools:\nx\nhint", "Tools:\nx\nhint")) == 4


def test_small_catalogs_give_each_conversation_only_its_own_api_classes() -> None:
    data = Path(__file__).resolve().parents[3] / "shared" / "data"
    if not (data / "bfcl_multiturn" / "queries.dev.jsonl").is_file():
        pytest.skip(f"the bfcl_multiturn dev split is not at {data}")
    registry, names = corpora.load_registry(data, "bfcl_small")
    convs = corpora.load_conversations(data, "bfcl_small", names)
    small = corpora.registries("bfcl_small", registry, convs)
    for conv in convs:
        own = small[conv.id]
        classes = {s.bundle for s in own.allowed()}
        assert classes == corpora.classes_of(registry, conv)
        assert all(g in {s.name for s in own.allowed()} for t in conv.turns for g in t.gold)
    sizes = {len(r.allowed()) for r in small.values()}
    assert len(registry.allowed()) > max(sizes) and min(sizes) >= 17
    assert corpora.registries("bfcl_multiturn", registry, convs)[convs[0].id] is registry
