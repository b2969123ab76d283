"""Learning through the trinket: what a turn teaches, what never teaches, and ``learn = "off"``."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from sqlalchemy import text

from tooltray.memory.config import Settings
from tooltray.memory.core.catalog import AllowedCatalog
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.learning import StoreSignals
from tooltray.memory.retrieval.selector import NoSignals
from tooltray.memory.store import Store
from tooltray.tools.registry import ToolRegistry

from .conftest import MakeTrinket, finish_turn, user

TRIP = "Find me flights from Boston to Lisbon on Nov 10 and a hotel there under 180 a night."
AGENDA = "Put the flight in my calendar and email Dana the itinerary."
CODE = "The parse_range test is failing: read src/dates.py and fix the off-by-one bug."
SCRIPT = [
    (TRIP, ["travel_search_flights", "travel_search_hotels"]),
    (AGENDA, ["calendar_create_event", "email_send"]),
    (CODE, ["files_read", "files_edit"]),
]
LEARNED = ("learn_pairs", "learn_requests")


def rows(url: str, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    store = Store(url)
    try:
        with store.engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(sql), params)]
    finally:
        store.close()


def as_list(value: Any) -> list[str]:
    """A JSON column read by raw SQL: a list on PostgreSQL, its text on SQLite."""
    return list(json.loads(value) if isinstance(value, str) else value)


def play(trinket: ToolLoaderTrinket, sid: str) -> list[tuple[list[str], str]]:
    """The scripted conversation; what each turn exposed (loaded set, prefix hash)."""
    messages: list[dict[str, str]] = []
    seen = []
    for turn, (message, used) in enumerate(SCRIPT, start=1):
        messages.append(user(message))
        view = trinket.prepare(sid, messages)
        seen.append((list(view.loaded), view.prefix_hash))
        finish_turn(sid, turn, used)
        messages.append({"role": "assistant", "content": "done"})
    return seen


def stored(url: str, sid: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of one session, timestamps left out (they differ run to run)."""
    p = {"s": sid}
    return {
        "sessions": rows(url, "SELECT turn, status, meta FROM sessions WHERE id = :s", **p),
        "loaded": rows(
            url,
            "SELECT name, position, loaded_turn, last_used_turn, source, score, fallback "
            "FROM loaded_tools WHERE session_id = :s ORDER BY position",
            **p,
        ),
        "history": rows(
            url,
            "SELECT turn, kind, tool, source, score, detail FROM history "
            "WHERE session_id = :s ORDER BY id",
            **p,
        ),
        "turns": rows(
            url,
            "SELECT turn, prefix_hash, tool_tokens, loaded_count, eager_tokens FROM turns "
            "WHERE session_id = :s ORDER BY turn",
            **p,
        ),
    }


def test_turn_end_learns_the_used_tools_and_the_message_vector(
    make_trinket: MakeTrinket, db_url: str
) -> None:
    trinket = make_trinket()
    trinket.prepare("s", [user(TRIP)])
    finish_turn("s", 1, ["travel_search_hotels", "travel_search_flights"])
    found = rows(db_url, "SELECT session_id, turn, tools, dim, vector, text FROM learn_requests")
    assert len(found) == 1
    sid, turn, tools, dim, vector, kept = found[0]
    assert (sid, turn, kept, dim) == ("s", 1, None, 384)
    assert as_list(tools) == ["travel_search_flights", "travel_search_hotels"]
    mine = np.frombuffer(bytes(vector), np.float32)
    fresh = trinket.catalog.selector().embedder.embed([TRIP], "query")[0]
    assert abs(float(np.linalg.norm(mine)) - 1.0) < 1e-4
    assert float(mine @ fresh) > 0.99
    assert isinstance(trinket.signals, StoreSignals)
    assert trinket.signals.companions(["travel_search_flights"]) == {
        "travel_search_hotels": trinket.signals.companions(["travel_search_flights"])[
            "travel_search_hotels"
        ]
    }
    votes = trinket.signals.past_requests(np.asarray([fresh], np.float32))
    assert votes.keys() == {"travel_search_flights", "travel_search_hotels"}


def test_learn_keep_text_keeps_the_message(make_trinket: MakeTrinket, db_url: str) -> None:
    trinket = make_trinket(learn_keep_text=True)
    trinket.prepare("k", [user(CODE)])
    finish_turn("k", 1, ["files_read"])
    assert rows(db_url, "SELECT text FROM learn_requests") == [(CODE,)]


def test_a_turn_teaches_the_request_not_the_follow_up_its_call_came_after(
    make_trinket: MakeTrinket, db_url: str
) -> None:
    trinket = make_trinket(learn_keep_text=True)
    messages = [user(TRIP)]
    trinket.prepare("f", messages)
    finish_turn("f", 1, [])  # the model asked a question back: nothing used, nothing taught
    messages += [{"role": "assistant", "content": "Which dates?"}, user("Yes, the 10th.")]
    trinket.prepare("f", messages)
    finish_turn("f", 2, ["travel_search_flights"])
    messages += [{"role": "assistant", "content": "done"}, user(CODE)]
    trinket.prepare("f", messages)
    finish_turn("f", 3, ["files_read"])
    found = rows(db_url, "SELECT turn, text FROM learn_requests ORDER BY turn")
    assert found == [(2, TRIP), (3, CODE)]


def test_denied_refused_meta_and_fallback_loads_never_teach(
    make_trinket: MakeTrinket, db_url: str
) -> None:
    trinket = make_trinket(deny=["email_send"])
    trinket.prepare("d", [user(AGENDA)])
    trinket.handle_meta("d", "fallback", {})
    trinket.refuse("d", "not_a_tool", "unknown")
    finish_turn("d", 1, ["email_send", "load_tools", "not_a_tool"])
    assert rows(db_url, "SELECT COUNT(*) FROM learn_requests") == [(0,)]
    assert rows(db_url, "SELECT COUNT(*) FROM learn_pairs") == [(0,)]
    trinket.prepare("d", [user(AGENDA), user("And add it to my calendar.")])
    finish_turn("d", 2, ["calendar_create_event", "email_send"])
    found = rows(db_url, "SELECT tools FROM learn_requests")
    assert [as_list(t) for (t,) in found] == [["calendar_create_event"]]
    mates = rows(db_url, "SELECT DISTINCT tool FROM learn_pairs UNION SELECT mate FROM learn_pairs")
    assert {m for (m,) in mates} == {"calendar_create_event"}


def test_learn_off_is_byte_identical_to_no_learning(
    make_trinket: MakeTrinket, registry: ToolRegistry, db_url: str
) -> None:
    on = make_trinket()
    play(on, "conv")  # fills the learned tables: the history `off` must ignore
    on.close()
    learned = {t: rows(db_url, f"SELECT * FROM {t} ORDER BY 1, 2") for t in LEARNED}
    assert learned["learn_requests"] and learned["learn_pairs"]
    off = make_trinket(learn="off")
    assert isinstance(off.signals, NoSignals)
    seen_off = play(off, "conv-off")
    off.close()
    assert {t: rows(db_url, f"SELECT * FROM {t} ORDER BY 1, 2") for t in LEARNED} == learned
    settings = Settings(db=db_url, learn="off")
    with Store(db_url) as store:  # selection as it was before learning: a planner without signals
        planner = AllowedCatalog(registry, settings, store)
        with ToolLoaderTrinket(registry, store, settings=settings, catalog=planner) as base:
            assert play(base, "conv-base") == seen_off
    assert stored(db_url, "conv-base") == stored(db_url, "conv-off")


def test_a_restarted_process_teaches_the_request_after_what_was_learned(
    make_trinket: MakeTrinket, db_url: str
) -> None:
    first = make_trinket(learn_keep_text=True)
    messages = [user(TRIP)]
    first.prepare("r", messages)
    finish_turn("r", 1, ["travel_search_flights"])
    first.close()  # the process ends; the next one reads the session back
    messages += [{"role": "assistant", "content": "done"}, user(CODE)]
    second = make_trinket(learn_keep_text=True)
    second.prepare("r", messages)
    finish_turn("r", 2, ["files_read"])
    assert rows(db_url, "SELECT turn, text FROM learn_requests ORDER BY turn") == [
        (1, TRIP),
        (2, CODE),
    ]


def test_a_search_takes_what_past_sessions_with_a_request_like_it_used(
    make_trinket: MakeTrinket, tmp_path: Any
) -> None:
    query = {"query": "plan a trip to Lisbon"}
    fresh = make_trinket(url=f"sqlite:///{tmp_path / 'fresh.db'}")
    fresh.handle_meta("cold", "load_tools", query)
    alone = fresh.loaded("cold")
    assert alone and "email_send" not in alone  # the query's own matches
    trinket = make_trinket()
    for n in range(3):  # a deployment whose trip requests went on to email the plan
        trinket.prepare(f"past{n}", [user(f"Plan my trip to Lisbon, version {n}.")])
        finish_turn(f"past{n}", 1, ["email_send"])
    trinket.handle_meta("now", "load_tools", query)
    loaded = trinket.loaded("now")
    assert "email_send" in loaded and set(alone) < set(loaded)  # beside the query's matches


GETAWAY = {"query": "weekend getaway paperwork"}


def test_a_search_takes_what_past_searches_like_it_led_to(
    make_trinket: MakeTrinket, db_url: str, tmp_path: Any
) -> None:
    """Gateway sessions (no user text reaches tooltray): what a search text led to is learned
    per search, so a later search like it (in a process that read the store since: a search
    reads what the last prepare read) takes that tool beside its matches; the same uses after
    no search teach the search nothing, and the query's text is not stored."""
    other = f"sqlite:///{tmp_path / 'no-search.db'}"
    without, trinket = make_trinket(url=other), make_trinket()
    for past in (without, trinket):
        for n in range(3):  # each escaped to email_send, which the search's answer lacked
            if past is trinket:
                past.handle_meta(f"past{n}", "load_tools", GETAWAY)
                assert "email_send" not in past.loaded(f"past{n}")
            past.handle_meta(f"past{n}", "load_tools", {"tools": ["email_send"]})
            finish_turn(f"past{n}", 1, ["email_send"])
    without, trinket = make_trinket(url=other), make_trinket()  # later processes
    without.handle_meta("now", "load_tools", GETAWAY)
    alone = without.loaded("now")
    assert alone and "email_send" not in alone  # history without searches: the matches alone
    trinket.handle_meta("now", "load_tools", GETAWAY)
    loaded = trinket.loaded("now")
    assert "email_send" in loaded and set(alone) < set(loaded)  # beside the query's matches
    taught = rows(db_url, "SELECT session_id, tools, text FROM learn_searches ORDER BY id")
    assert [(s, as_list(t), x) for s, t, x in taught] == [
        (f"past{n}", ["email_send"], None) for n in range(3)
    ]


def test_a_session_s_own_searches_never_vote_for_it(make_trinket: MakeTrinket) -> None:
    """The one session that learned a search asks the same query again: its own past search
    does not vote for it, while it votes for any other session."""
    trinket = make_trinket()
    trinket.handle_meta("past", "load_tools", GETAWAY)
    trinket.handle_meta("past", "load_tools", {"tools": ["email_send"]})
    finish_turn("past", 1, ["email_send"])
    later = make_trinket()  # a process that reads what "past" taught
    signals = later.catalog.signals
    vector = later.catalog.query_vector(GETAWAY["query"])
    assert vector is not None
    mine = signals.past_searches(np.asarray(vector[1], np.float32), "past")
    other = signals.past_searches(np.asarray(vector[1], np.float32), "other")
    assert mine == {} and other == {"email_send": 1.0}
