"""Implicit tools: a deployment's usage priors and the ``implicit`` setting load the generic tools
(a filesystem's ``write_file``) that sessions use and their messages never name; priced like any
pick, shown by ``explain``, and a bad entry is refused at start with the closest names."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tooltray.memory.cli.main import cli
from tooltray.memory.config import Settings
from tooltray.memory.core.policy import LATENCY
from tooltray.memory.core.policy import opening as open_picks
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.learning.usage import (
    Explained,
    Prior,
    Usage,
    check_implicit,
    declared,
    found_priors,
    members,
    merged,
    one_escape,
    priors,
    unopened,
    usage_of,
    usual,
    with_mates,
)
from tooltray.memory.retrieval.scoring import Candidate
from tooltray.memory.retrieval.selector import SessionSignals
from tooltray.memory.store import Store
from tooltray.memory.tuning import (
    IMPLICIT_CHANCE,
    NEEDED_TOOLS,
    USAGE_MIN_CHANCE,
    USAGE_MIN_SESSIONS,
    USAGE_MIN_USES,
    USAGE_PSEUDO,
    needed,
)
from tooltray.tools.demo import demo_registry
from tooltray.tools.errors import ConfigError
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec

from .conftest import finish_turn, user, write_catalog

WRITE = "filesystem_write_file"
PATH = {"path": {"type": "string", "description": "Where the file is."}}
FILESYSTEM = [
    ToolSpec(
        name=WRITE,
        bundle="filesystem",
        description="Create a new file or completely overwrite an existing file with content.",
        parameters={
            "type": "object",
            "properties": {**PATH, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    ),
    ToolSpec(
        name="filesystem_read_file",
        bundle="filesystem",
        description="Read the complete contents of a file from the file system.",
        parameters={"type": "object", "properties": PATH, "required": ["path"]},
    ),
    ToolSpec(
        name="filesystem_list_directory",
        bundle="filesystem",
        description="Get a detailed listing of all files and directories in a path.",
        parameters={"type": "object", "properties": PATH, "required": ["path"]},
    ),
]
PAST = [
    ("What's the weather in Oslo tomorrow?", "weather_forecast"),
    ("Find flights from Boston to Lisbon on Nov 10.", "travel_search_flights"),
    ("Show my calendar for Friday.", "calendar_list_events"),
    ("Send an email to Dana saying I'm late.", "email_send"),
    ("Find a hotel in Rome under 150 a night.", "travel_search_hotels"),
    ("Convert 30 miles to kilometres.", "math_convert_units"),
]
NEW = "Will it rain in Paris this weekend?"  # names no file, no saving, no writing
NAMED = "Write the meeting notes into the file notes.txt."  # finds the tool itself


def specs() -> list[ToolSpec]:
    return [*demo_registry().allowed(), *FILESYSTEM]


def bundle_of() -> dict[str, str | None]:
    return {s.name: s.bundle for s in specs()}


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """The demo tools and a filesystem server as a tools.jsonl file (what ``explain`` reads)."""
    return write_catalog(tmp_path / "tools.jsonl", specs())


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'tooltray.db'}"


@pytest.fixture
def trinket(catalog: Path, url: str) -> Iterator[ToolLoaderTrinket]:
    made = ToolLoaderTrinket(
        ToolRegistry.from_catalog(catalog), Store(url), settings=Settings(db=url)
    )
    yield made
    made.close()


def past_sessions(trinket: ToolLoaderTrinket, first: int, last: int) -> None:
    """Sessions ``first``..``last - 1``: each asks its own task and also writes a file."""
    for i in range(first, last):
        message, tool = PAST[i % len(PAST)]
        sid = f"past-{i}"
        trinket.prepare(sid, [user(message)])
        finish_turn(sid, 1, [tool, WRITE])


def named_sessions(trinket: ToolLoaderTrinket, count: int) -> None:
    """Sessions whose message asks for the file it writes: their request finds the tool."""
    for i in range(count):
        sid = f"named-{i}"
        trinket.prepare(sid, [user(f"Write the meeting notes into the file notes-{i}.txt.")])
        finish_turn(sid, 1, [WRITE])


def opening(trinket: ToolLoaderTrinket, sid: str) -> dict[str, str]:
    """What a new session's first prepare loads, with each tool's source."""
    trinket.prepare(sid, [user(NEW)])
    snapshot = trinket.store.snapshot(sid)
    assert snapshot is not None
    return {t.name: t.source for t in snapshot.loaded}


# ----- through the trinket (real SQLite, real embedder) --------------------------------------


def test_past_sessions_use_loads_an_unnamed_tool_once_there_are_enough(
    trinket: ToolLoaderTrinket,
) -> None:
    past_sessions(trinket, 0, USAGE_MIN_SESSIONS - 1)
    before = opening(trinket, "new-early")
    assert WRITE not in before and "weather_forecast" in before  # the message's own tool loads
    past_sessions(trinket, USAGE_MIN_SESSIONS - 1, USAGE_MIN_SESSIONS + 1)
    after = opening(trinket, "new-later")
    assert after.get(WRITE) == "usage"
    assert "filesystem_read_file" not in after  # no session used it: no prior


def test_declared_implicit_tools_are_priced_without_history(catalog: Path, url: str) -> None:
    """A declared tool is a candidate, not a pin: one whose tokens its chance does not pay for
    (a huge schema) stays out; a bad entry is refused at start with the closest names."""
    huge = ToolSpec(
        name="filesystem_edit_file",
        bundle="filesystem",
        description="Make line-based edits to a text file. " + "Each edit replaces text. " * 800,
    )
    registry = ToolRegistry([*ToolRegistry.from_catalog(catalog).allowed(), huge])
    settings = Settings(db=url, implicit=["filesystem/write_file", "filesystem_edit_file"])
    trinket = ToolLoaderTrinket(registry, Store(url), settings=settings)
    try:
        loaded = opening(trinket, "declared")
        signals = SessionSignals(trinket.catalog.signals, "named")
        named = trinket.catalog.priors_for([NAMED], signals)  # a request finding it keeps it
    finally:
        trinket.close()
    assert loaded.get(WRITE) == "implicit" and named[WRITE].source == "implicit"
    assert "filesystem_edit_file" not in loaded and "filesystem_read_file" not in loaded
    with pytest.raises(ConfigError) as bad:
        ToolLoaderTrinket(registry, settings=Settings(db=url, implicit=["filesytem_write_file"]))
    assert "'filesytem_write_file'" in str(bad.value) and f"closest: {WRITE}" in str(bad.value)


def test_explain_says_which_prior_loaded_a_tool(
    trinket: ToolLoaderTrinket, catalog: Path, url: str, tmp_path: Path
) -> None:
    past_sessions(trinket, 0, USAGE_MIN_SESSIONS + 1)
    trinket.close()
    args = ["explain", NEW, "--catalog", str(catalog), "--format", "json"]
    learned = CliRunner().invoke(cli, [*args, "--db", url])
    assert learned.exit_code == 0, learned.output
    rows = {r["tool"]: r["decision"] for r in json.loads(learned.stdout)}
    share = (USAGE_MIN_SESSIONS + 1) / (USAGE_MIN_SESSIONS + 1 + USAGE_PSEUDO)
    shown = f"loads (usage prior {share:.2f} over {USAGE_MIN_SESSIONS + 1} sessions"
    assert rows[WRITE].startswith(shown) and "server filesystem" in rows[WRITE]
    fresh = f"sqlite:///{tmp_path / 'fresh.db'}"
    Store(fresh).close()
    env = {"TOOLTRAY_IMPLICIT": json.dumps([WRITE])}
    declared_run = CliRunner().invoke(cli, [*args, "--db", fresh], env=env)
    assert declared_run.exit_code == 0, declared_run.output
    rows = {r["tool"]: r["decision"] for r in json.loads(declared_run.stdout)}
    assert rows[WRITE] == f"loads (declared implicit, chance {IMPLICIT_CHANCE:.2f})"


def test_a_search_no_opening_selected_for_carries_the_priors(trinket: ToolLoaderTrinket) -> None:
    """A session no user text reached (an MCP client's searches) gets with its search's answer
    the priors an opening would have offered; under ``USAGE_MIN_SESSIONS`` there are none."""
    query = {"query": "weather forecast for Paris"}
    past_sessions(trinket, 0, USAGE_MIN_SESSIONS - 1)
    trinket.handle_meta("early", "load_tools", query)
    assert "weather_forecast" in trinket.loaded("early") and WRITE not in trinket.loaded("early")
    past_sessions(trinket, USAGE_MIN_SESSIONS - 1, USAGE_MIN_SESSIONS + 1)
    trinket.handle_meta("later", "load_tools", query)
    assert {"weather_forecast", WRITE} <= set(trinket.loaded("later"))
    assert "filesystem_read_file" not in trinket.loaded("later")  # no session used it


def test_the_priors_join_beside_the_matches_at_most_the_room() -> None:
    """Best first, none the answer or the session holds, none under ``USAGE_MIN_CHANCE``, at
    most ``room`` of them, before the answer's mentions."""
    known = {
        "a": Prior(0.6, "usage"),
        "b": Prior(0.5, "implicit"),
        "c": Prior(0.4, "usage"),
        "d": Prior(USAGE_MIN_CHANCE / 2, "usage"),
    }
    found = [Candidate("m", "semantic", 2.0), Candidate("srv", "semantic", 0.0, mention=True)]
    out = unopened(found, known, {"a"}, 2)
    assert [c.name for c in out] == ["m", "b", "c", "srv"]
    assert [c.source for c in out[1:3]] == ["implicit", "usage"] and out[1].chance == 0.5
    assert [c.name for c in unopened(found, known, (), 1)] == ["m", "a", "srv"]
    assert [c.name for c in unopened(found, {"d": known["d"]}, (), 2)] == ["m", "srv"]


def test_a_request_that_finds_the_tool_adds_no_prior(trinket: ToolLoaderTrinket) -> None:
    """The prior counts the uses whose request missed the tool, so it is added only where this
    request misses it too (the same test, on the request learning stores); a request naming
    the file finds the tool and its own pick prices it."""
    past_sessions(trinket, 0, USAGE_MIN_SESSIONS + 1)
    catalog = trinket.catalog
    signals = SessionSignals(catalog.signals, "new")
    assert catalog.priors(signals)[WRITE].source == "usage"
    assert WRITE in catalog.priors_for([NEW], signals)
    assert WRITE not in catalog.priors_for([NAMED], signals)


def test_a_found_tool_takes_the_share_of_past_finds_that_used_it(
    trinket: ToolLoaderTrinket,
) -> None:
    """Sessions whose request found the file tool and used it: a new request that finds it
    gives it that share (shrunk) as its chance, shown by ``explain``; one that does not find
    it gets none (the miss prior counts no found use)."""
    named_sessions(trinket, USAGE_MIN_SESSIONS + 1)
    catalog = trinket.catalog
    signals = SessionSignals(catalog.signals, "new")
    found = catalog.priors_for([NAMED], signals)[WRITE]
    seen = USAGE_MIN_SESSIONS + 1
    assert found.chance == pytest.approx(seen / (seen + USAGE_PSEUDO), rel=0.05)
    assert found.found is not None and "whose request found it" in found.why()
    assert WRITE not in catalog.priors_for([NEW], SessionSignals(catalog.signals, "other"))


def test_only_uses_the_message_did_not_find_count(trinket: ToolLoaderTrinket) -> None:
    """A tool the sessions' own requests named gets no prior however often it was used; one
    used where the request did not name it gets one."""
    named_sessions(trinket, USAGE_MIN_SESSIONS + 1)
    assert WRITE not in opening(trinket, "new-named")
    past_sessions(trinket, 0, USAGE_MIN_SESSIONS + 1)
    assert opening(trinket, "new-unnamed").get(WRITE) == "usage"


# ----- the rules on their own ----------------------------------------------------------------


def test_shares_wait_for_the_minimum_and_shrink_a_coincidence() -> None:
    few = Usage((1.0,) * (USAGE_MIN_SESSIONS - 1), (frozenset({WRITE}),) * (USAGE_MIN_SESSIONS - 1))
    assert few.shares == {}
    ten = Usage((1.0,) * 10, (frozenset({WRITE, "fetch"}),) * 3 + (frozenset({"once"}),) * 7)
    assert ten.shares[WRITE] == pytest.approx(3 / (10 + USAGE_PSEUDO))
    assert ten.server_shares({WRITE: "filesystem", "fetch": "filesystem"}) == {
        "filesystem": pytest.approx(3 / 12)
    }
    known = priors(ten, {}, {WRITE: "filesystem", "fetch": "fetch", "other": "x"})
    assert list(known) == ["fetch", WRITE]  # best first; "once" is no tool of the catalog
    assert known[WRITE].sessions == 10 and known[WRITE].server_share == pytest.approx(3 / 12)
    assert priors(Usage((1.0,) * 10, (frozenset({"once"}),) + (frozenset(),) * 9), {}, {}) == {}


@pytest.mark.no_embedder
def test_a_steady_share_under_the_floor_counts_where_the_opening_prices() -> None:
    """Three of twenty sessions (0.14, under the floor) are a habit the priced opening weighs;
    the unpriced ``share`` opening keeps the floor; one use, or old ones, stay out."""
    of = {WRITE: "filesystem"}
    twenty = Usage((1.0,) * 20, (frozenset({WRITE}),) * 3 + (frozenset(),) * 17)
    assert twenty.shares[WRITE] < USAGE_MIN_CHANCE and twenty.uses[WRITE] == 3.0
    assert priors(twenty, {}, of) == {}
    assert priors(twenty, {}, of, priced=True)[WRITE].chance == pytest.approx(3 / 22)
    once = Usage((1.0,) * 20, (frozenset({WRITE}),) + (frozenset(),) * 19)
    assert priors(once, {}, of, priced=True) == {}
    old = Usage((0.5,) * 3 + (1.0,) * 17, twenty.tools)  # three uses, half-forgotten: 1.5
    assert priors(old, {}, of, priced=True) == {}


def test_a_use_counts_only_below_the_requests_top_tools() -> None:
    docs = np.eye(4, dtype=np.float32)
    explained = Explained({"a": 0, "b": 1, "c": 2, "d": 3}, docs, top=2)
    near_a = np.array([[0.9, 0.3, 0.1, 0.0], [0.0, 0.1, 0.2, 0.9]], np.float32)
    used = [["a", "b", "c", "outside"], ["a", "d"]]
    assert explained.missed(near_a, used) == [frozenset({"c", "outside"}), frozenset({"a"})]
    everything = Explained(explained.position, docs, top=4)
    assert everything.missed(near_a, used) == [frozenset({"outside"}), frozenset()]
    other_dim = np.ones((2, 3), np.float32)
    assert explained.missed(other_dim, used) == [frozenset(u) for u in used]


@pytest.mark.no_embedder
def test_a_request_finds_its_top_tools_ties_included() -> None:
    docs = np.eye(4, dtype=np.float32)
    explained = Explained({"a": 0, "b": 1, "c": 2, "d": 3}, docs, top=2)
    near = np.array([[0.9, 0.3, 0.1, 0.0], [0.5, 0.5, 0.5, 0.0]], np.float32)
    assert explained.found(near) == [frozenset({"a", "b"}), frozenset({"a", "b", "c"})]
    assert Explained(explained.position, docs, top=9).found(near[:1]) == [frozenset("abcd")]
    assert explained.telling and not Explained(explained.position, docs, top=3).telling
    assert explained.found(np.ones((1, 3), np.float32)) == [frozenset()]


@pytest.mark.no_embedder
def test_found_priors_count_the_finds_that_were_used() -> None:
    """Of the past sessions whose request found a tool, the share that used it (shrunk); a
    tool found and used too rarely, or never used, has none; the unpriced opening keeps the
    floor; the larger of two priors wins where they meet."""
    of = {WRITE: "filesystem", "read": "filesystem", "rare": "x"}
    found = (frozenset({WRITE, "read", "rare"}),) * 4 + (frozenset({"read"}),) * 6
    hits = (frozenset({WRITE, "rare"}),) + (frozenset({WRITE}),) * 3 + (frozenset(),) * 6
    usage = Usage((1.0,) * 10, (frozenset(),) * 10, found, hits)
    assert usage.when_found["read"] == (0.0, 10.0) and usage.when_found[WRITE] == (4.0, 4.0)
    known = found_priors(usage, {WRITE, "read", "rare", "elsewhere"}, of, priced=True)
    assert list(known) == [WRITE]  # read: never used; rare: once, under USAGE_MIN_USES
    assert known[WRITE].chance == pytest.approx(4 / (4 + USAGE_PSEUDO))
    assert known[WRITE].found == (4.0, 4.0) and USAGE_MIN_USES > 1.0
    assert found_priors(usage, {"read"}, of, priced=True) == {}
    twice = (frozenset({WRITE}),) * 2 + (frozenset(),) * 18
    often = Usage((1.0,) * 20, (frozenset(),) * 20, (frozenset({WRITE}),) * 20, twice)
    assert found_priors(often, {WRITE}, of, priced=True)[WRITE].chance == pytest.approx(2 / 22)
    assert USAGE_MIN_CHANCE > 2 / 22 and found_priors(often, {WRITE}, of) == {}
    few = Usage((1.0,) * 3, (frozenset(),) * 3, found[:3], hits[:3])
    assert found_priors(few, {WRITE}, of, priced=True) == {}  # under USAGE_MIN_SESSIONS
    assert merged(known, {WRITE: Prior(0.9, "implicit")})[WRITE].source == "implicit"
    assert merged(known, {WRITE: Prior(0.1, "implicit")})[WRITE].source == "usage"


@pytest.mark.no_embedder
def test_within_counts_the_sessions_that_used_each_tool_beside_another_of_its_server() -> None:
    """Of the sessions that used another of a server's tools, the share that used each tool too
    (shrunk), for tools two such sessions used, however old; the found uses (``hits``) count
    with the misses. A tool a session used as its server's only one was that server's
    alternative there (the message's scores choose it), not a mate."""
    of = {"p_search": "papers", "p_read": "papers", "p_rare": "papers", "m_geo": "maps"}
    tools = (frozenset({"p_search"}),) * 3 + (frozenset({"m_geo"}),) * 3 + (frozenset(),) * 4
    hits = (frozenset({"p_read", "p_rare"}),) + (frozenset({"p_read"}),) * 2 + (frozenset(),) * 7
    usage = Usage((1.0,) * 10, tools, tools, hits)
    assert usage.used[0] == frozenset({"p_search", "p_read", "p_rare"})
    within = usage.within(of)
    assert within["p_search"] == ("papers", pytest.approx(3 / (3 + USAGE_PSEUDO)))
    assert within["p_read"] == within["p_search"] and "p_rare" not in within  # one session
    assert "m_geo" not in within  # three sessions, each with no other maps tool
    assert Usage((1.0,) * 3, tools[:3]).within(of) == {}  # under USAGE_MIN_SESSIONS
    pair, search, rare = (
        frozenset({"p_search", "p_read"}),
        frozenset({"p_search"}),
        frozenset({"p_rare"}),
    )
    aged = Usage((0.98,) * 10, (pair, pair, search, rare) + (frozenset(),) * 6).within(of)
    # two sessions weigh 1.96: still two; p_search's lone session leaves its denominator
    assert aged["p_search"] == ("papers", pytest.approx(1.96 / (3 * 0.98 + USAGE_PSEUDO)))
    assert aged["p_read"] == ("papers", pytest.approx(1.96 / (4 * 0.98 + USAGE_PSEUDO)))
    assert "p_rare" not in aged


OF = {"p_search": "papers", "p_read": "papers", "p_dl": "papers", "m_geo": "maps"}
OF["m_route"] = "maps"


@pytest.mark.no_embedder
def test_a_picks_server_brings_its_habitual_mates_at_the_servers_chance() -> None:
    """A mate's chance is its server's (the best chance among the server's picks) times its
    share within the server: a pick is raised to it, a tool the message did not pick joins
    with it; a server with no pick brings nothing."""
    within = {"p_search": ("papers", 0.6), "p_read": ("papers", 0.3), "m_geo": ("maps", 0.8)}
    top, other = Candidate("p_read", "semantic", 2.0), Candidate("x", "semantic", 1.0)
    low = Candidate("p_search", "semantic", 0.1)
    out = {c.name: c for c in with_mates([top, other, low], within, NEEDED_TOOLS, OF)}
    server = needed(2.0, 2.0, NEEDED_TOOLS)
    assert out["p_search"].chance == pytest.approx(server * 0.6) and out["p_search"].score == 0.1
    assert out["p_read"].chance == pytest.approx(server * 0.3)
    assert "m_geo" not in out and out["x"] == other
    maps = {**within, "m_route": ("maps", 0.2)}
    alone = with_mates([other, Candidate("m_geo", "usage", None, 0.3)], maps, NEEDED_TOOLS, OF)
    assert alone[1].chance == 0.3  # a chance is never lowered
    assert alone[-1] == Candidate("m_route", "usage", None, pytest.approx(0.3 * 0.2))
    added = with_mates([top], {**within, "p_dl": ("papers", 0.4)}, NEEDED_TOOLS, OF)
    assert [c.name for c in added] == ["p_read", "p_search", "p_dl"]  # likelier mates first
    assert added[1].score is None and added[1].source == "usage"
    tied = {"p_search": ("papers", 0.5), "p_dl": ("papers", 0.5)}  # set order in, name order out
    for shares in (tied, dict(reversed(tied.items()))):
        order = [c.name for c in with_mates([top], shares, NEEDED_TOOLS, OF)]
        assert order == ["p_read", "p_dl", "p_search"]


@pytest.mark.no_embedder
def test_a_servers_mates_together_claim_at_most_one_escape() -> None:
    """One escape brings whichever of a server's mates a session needs, so their chances sum to
    at most the server's: the likeliest claim their shares until these reach 1, the next what
    is left, the rest nothing (ties in name order); another server's mates are not touched."""
    many = {f"b_{n}": ("bio", 0.5) for n in "dcba"} | {"p_dl": ("papers", 0.4)}
    claim = one_escape(many | {"b_top": ("bio", 0.7)})
    assert claim == pytest.approx(
        {"b_top": 0.7, "b_a": 0.3, "b_b": 0.0, "b_c": 0.0, "b_d": 0.0, "p_dl": 0.4}
    )
    of = {**OF, **{name: "bio" for name in many if name.startswith("b_")}, "b_pick": "bio"}
    pick = Candidate("b_pick", "semantic", 2.0)
    server = needed(2.0, 2.0, NEEDED_TOOLS)
    out = {c.name: c.chance for c in with_mates([pick], many, NEEDED_TOOLS, of)}
    assert out["b_a"] == pytest.approx(server * 0.5) and out["b_b"] == pytest.approx(server * 0.5)
    assert out["b_c"] == out["b_d"] == 0.0 and "p_dl" not in out  # papers has no pick
    assert sum(c for n, c in out.items() if n != "b_pick") == pytest.approx(server)


@pytest.mark.no_embedder
def test_a_servers_record_and_any_pick_of_it_bring_its_mates() -> None:
    """A pick no past session used still names its server, and a server whose finds were
    mostly used takes that record as its chance (at a catalog size that scales a pick's own
    chance down): the mate of a geocoder no session used joins at record x share."""
    of = {**OF, "m_ip": "maps", "m_text": "maps", "z": "other"}
    geo, ip, text = frozenset({"m_geo"}), frozenset({"m_ip"}), frozenset({"m_text"})
    found = (geo | ip,) * 4 + (ip | frozenset({"z"}),) * 2 + (frozenset({"z"}),) * 4
    hits = (geo,) + (frozenset(),) * 9
    tools = (text, text | frozenset({"m_route"}), text) + (frozenset(),) * 7
    usage = Usage((1.0,) * 10, tools, found, hits)
    record = usage.servers_found(of)
    assert record == {"maps": pytest.approx(3 / (6 + USAGE_PSEUDO))}  # "other": never used
    within = usage.within(of)
    assert within == {"m_text": ("maps", pytest.approx(2 / (2 + USAGE_PSEUDO)))}  # once alone
    big = 100 * NEEDED_TOOLS
    pick = Candidate("m_ip", "semantic", 2.0)
    out = with_mates([pick], within, big, of, record)
    assert [c.name for c in out] == ["m_ip", "m_text"]
    assert out[1].chance == pytest.approx(record["maps"] / 2)
    assert out[1].chance > needed(2.0, 2.0, big) / 2  # the record, not the scaled pick
    assert with_mates([pick], within, big, of)[1].chance == pytest.approx(needed(2.0, 2.0, big) / 2)
    assert Usage((1.0,) * 10, tools).servers_found(of) == {}  # no finds recorded
    proposed = Candidate("m_ip", "usage", None, 0.01)  # a prior's, not the message's: no record
    assert with_mates([proposed], within, big, of, record)[1].chance == pytest.approx(0.01 / 2)


def test_older_sessions_count_less() -> None:
    usage = usage_of([(0, frozenset({"old"})), (100, frozenset({"new"}))], 100, half_life=100.0)
    assert usage.weights == (0.5, 1.0)


def test_declared_entries_name_tools_bundles_server_tool_and_patterns() -> None:
    of = bundle_of()
    assert members(WRITE, of) == [WRITE]
    assert members("filesystem/write_file", of) == [WRITE]
    assert sorted(members("bundle:filesystem", of)) == sorted(members("filesystem", of))
    assert len(members("filesystem", of)) == 3 and members("filesystem_*_file", of)
    assert members("nothing", of) == [] and members("bundle:nothing", of) == []
    chances = declared([WRITE, "bundle:filesystem"], of)
    assert chances[WRITE] == IMPLICIT_CHANCE
    assert chances["filesystem_read_file"] == pytest.approx(IMPLICIT_CHANCE / 3)
    with pytest.raises(ConfigError, match="closest: filesystem"):
        check_implicit(["bundle:filesystm"], specs())


@pytest.mark.no_embedder
def test_a_prior_is_a_chance_the_opening_prices() -> None:
    """The priors given are those of tools the request misses
    (``AllowedCatalog.priors_for``): a pick among them keeps its score and source and takes the
    prior's chance where larger, a pick without one keeps its own; a tool the prior alone
    proposes has no score; the opening holds each whose chance pays."""
    known = {WRITE: Prior(0.3, "usage", 10), "weather_forecast": Prior(0.4, "usage", 10)}
    picks = [Candidate("weather_forecast", "semantic", 3.0), Candidate("email_send", "lexical")]
    picks += [Candidate("calendar_list_events", "semantic", 2.0, 0.6)]
    known["calendar_list_events"] = Prior(0.2, "usage", 10)
    out = usual(picks, known)
    assert [(c.name, c.source, c.score, c.chance) for c in out] == [
        ("weather_forecast", "semantic", 3.0, 0.4),
        ("email_send", "lexical", None, None),
        ("calendar_list_events", "semantic", 2.0, 0.6),
        (WRITE, "usage", None, 0.3),
    ]
    out = [c for c in out if c.name in {"weather_forecast", WRITE}]
    sizes = {"weather_forecast": 100, WRITE: 100}
    assert {c.name for c in open_picks(out, sizes, LATENCY, share=False).held} == set(sizes)
    sizes[WRITE] = 5000  # 0.3 of an escape does not pay for holding 5,000 tokens
    assert {c.name for c in open_picks(out, sizes, LATENCY, share=False).held} == {
        "weather_forecast"
    }
