"""How the conversation becomes a query, and the ToolSearch query forms."""

from __future__ import annotations

import pytest

from tooltray.memory.retrieval import QUERY_MODES, Query, build_query, parse_required, parse_select
from tooltray.tools.errors import ConfigError

USERS = ["first message about files", "second message about the calendar", "third about email"]


def test_build_query_modes() -> None:
    assert build_query(USERS, "current") == Query("third about email")
    assert build_query(USERS, "current+previous").text == f"{USERS[2]} {USERS[1]}"
    assert build_query(USERS, "all").text == " ".join(USERS)
    assert build_query(USERS, "weighted") == Query(USERS[2], USERS[1], 0.25)
    assert build_query([], "current") == Query("") and str(build_query(["hi"])) == "hi"
    assert set(QUERY_MODES) == {"adaptive", "current", "current+previous", "weighted", "all"}


def test_adaptive_lends_context_only_to_short_follow_ups() -> None:
    long = "now convert the quarterly report into a pdf and upload it to the shared drive"
    assert build_query([USERS[0], long]) == Query(long)
    assert build_query([long, "yes, do it"]) == Query("yes, do it", long, 0.5)
    assert build_query(["", "  ", long]) == Query(long)


def test_unknown_mode_names_the_choices() -> None:
    with pytest.raises(ConfigError, match="Unknown query mode 'newest'.*adaptive"):
        build_query(USERS, "newest")


def test_query_forms() -> None:
    assert parse_select("select:a, b ,,c") == ["a", "b", "c"]
    assert parse_select("select a") is None
    assert parse_required("+slack +send a message") == ("a message", ["slack", "send"])
    assert parse_required("+Slack") == ("slack", ["slack"])
    assert parse_required("plain words") == ("plain words", [])
