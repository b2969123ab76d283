"""The public API's boundary: bad session ids and messages are refused before any row is made,
a meta-tool call never raises, and a change the store can never take is dropped with one
accurate log line while the session's later writes go through (issue 33).

Each test runs on a real SQLite file and on PostgreSQL, and reads what a restart would see.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from tooltray.memory.core.inputs import MAX_SESSION_ID
from tooltray.memory.store import Store
from tooltray.memory.store.records import Changes, HistoryEvent
from tooltray.tools.errors import InputError

from .conftest import MakeTrinket, user

SURROGATE = json.loads('"\\ud800"')
BAD_IDS: list[Any] = [None, float("nan"), ("a", "b"), 7, "", "x" * (MAX_SESSION_ID + 1)]
BAD_IDS += ["a\x00b", f"s{SURROGATE}"]
BAD_MESSAGES: list[Any] = [None, "hi", 3, [1], [{"content": "no role"}], [{"role": 5}]]


def _two_turns(trinket: Any, session: str) -> list[dict[str, str]]:
    first = [user("What is the weather in Oslo tomorrow?")]
    trinket.prepare(session, first)
    return first + [{"role": "assistant", "content": "Sunny."}, user("Email Ann about it")]


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
def test_a_bad_session_id_is_refused_before_any_row(
    make_trinket: MakeTrinket, db_url: str, bad: Any
) -> None:
    trinket = make_trinket()
    for call in (
        lambda: trinket.prepare(bad, [user("hi")]),
        lambda: trinket.start(bad),
        lambda: trinket.handle_meta(bad, "load_tools", {"query": "weather"}),
        lambda: trinket.end(bad),
        lambda: trinket.shorten(bad, "web_search", "x" * 5000),
    ):
        with pytest.raises(InputError, match="session id"):
            call()
    with Store(db_url) as store:
        assert store.sessions() == []


@pytest.mark.parametrize("bad", BAD_MESSAGES, ids=repr)
def test_malformed_messages_are_refused_before_any_row(
    make_trinket: MakeTrinket, db_url: str, bad: Any
) -> None:
    trinket = make_trinket()
    with pytest.raises(InputError, match="message"):
        trinket.prepare("s", bad)
    with pytest.raises(InputError, match="message"):
        trinket.start("s", bad)
    with Store(db_url) as store:
        assert store.sessions() == []


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        (["load_tools"], {"tools": ["weather_forecast"]}),
        (SURROGATE, {}),
        ("load_tools", {"query": f"weather {SURROGATE}"}),
        ("load_tools", {"tools": [f"weather{SURROGATE}", "a\x00b"]}),
        ("fallback", {"reason": f"{SURROGATE}\x00"}),
    ],
    ids=["list-name", "surrogate-name", "surrogate-query", "odd-tool-names", "odd-reason"],
)
def test_an_odd_meta_call_never_raises_nor_stops_later_writes(
    make_trinket: MakeTrinket, db_url: str, name: Any, arguments: Any, caplog: Any
) -> None:
    trinket = make_trinket()
    later = _two_turns(trinket, "s")
    with caplog.at_level(logging.WARNING, logger="tooltray"):
        answer = trinket.handle_meta("s", name, arguments)
        trinket.prepare("s", later)
    assert isinstance(answer, str)
    assert trinket.state("s").pending == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    trinket.close()
    with Store(db_url) as store:
        assert store.snapshot("s").turn == 2, "the later turn is stored"


def test_a_change_that_cannot_be_stored_is_dropped_alone(
    make_trinket: MakeTrinket, db_url: str, caplog: Any
) -> None:
    """Past the boundary (a bug, say), the journal drops the bad change, logs it once without
    calling the database damaged, and stores the session's later changes."""
    trinket = make_trinket()
    later = _two_turns(trinket, "s")
    state = trinket.state("s")
    bad = HistoryEvent("s", 1, "refused", tool=f"x{SURROGATE}", detail="a\x00b")
    with caplog.at_level(logging.DEBUG, logger="tooltray"):
        trinket.journal.commit(state, Changes(events=[bad]))
        trinket.prepare("s", later)
        trinket.refuse("s", "web_search", "after the bad one")
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "dropped one change to session s" in errors[0]
    assert "move the database aside" not in errors[0]
    assert state.pending == []
    trinket.close()
    with Store(db_url) as store:
        assert store.snapshot("s").turn == 2
        refused = [e for e in store.history("s") if e.kind == "refused"]
        assert [e.detail for e in refused] == ["after the bad one"]
