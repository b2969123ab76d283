"""A session started from another's tools (subagents, forked conversations): the trinket's
``fork`` and ``tooltray fork`` on a real store (SQLite, and PostgreSQL when configured)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from tooltray.events import SessionStarted, session_started
from tooltray.memory.cli.main import cli
from tooltray.memory.store import Store
from tooltray.tools.errors import SessionForkError

from .conftest import MakeTrinket, user

TRIP = "Find me flights from Boston to Lisbon on Nov 10 and a hotel there under 180 a night."
CODE = "The parse_range test is failing: read src/dates.py and fix the off-by-one bug."


def parent_with_a_reveal(make_trinket: MakeTrinket) -> Any:
    """A parent that selected at its start, then loaded a tool mid-session (revealed after the
    prefix with ``reveal = "append"``)."""
    trinket = make_trinket(reveal="append", growth="never")
    trinket.prepare("parent", [user(TRIP)])
    trinket.handle_meta("parent", "load_tools", {"tools": ["git_commit"]})
    view = trinket.prepare("parent", [user(TRIP)])
    assert "git_commit" in {s.name for s in view.revealed}  # revealed, not in the prefix
    return trinket


def test_fork_starts_the_child_from_the_loaded_and_revealed_set(make_trinket: MakeTrinket) -> None:
    trinket = parent_with_a_reveal(make_trinket)
    parent = trinket.loaded("parent")
    started: list[SessionStarted] = []
    with session_started.connected_to(lambda sender, payload, **_: started.append(payload)):
        names = trinket.fork("parent", "child")
    assert names == parent and started[0].loaded == parent
    view = trinket.prepare("child", [user(CODE)])  # the subagent's own task
    child = trinket.loaded("child")
    assert child[: len(parent)] == parent  # inherited first, in order
    assert "git_commit" in {s.name for s in view.specs}  # in the child's own prefix
    assert len(child) > len(parent)  # its own selection appended what CODE needs
    starts = [e.detail for e in trinket.store.history("child") if e.kind == "started"]
    assert starts == ["fork of parent"]  # one start, naming its parent


def test_the_child_and_the_parent_never_touch_each_other(
    make_trinket: MakeTrinket, db_url: str
) -> None:
    trinket = parent_with_a_reveal(make_trinket)
    parent = trinket.loaded("parent")
    trinket.fork("parent", "child")
    trinket.prepare("child", [user(TRIP)])
    trinket.handle_meta("child", "unload_tools", {"tools": ["git_commit"]})
    trinket.handle_meta("child", "load_tools", {"tools": ["files_read"]})
    trinket.handle_meta("parent", "load_tools", {"tools": ["git_status"]})
    trinket.close()
    fresh = make_trinket(reveal="append", growth="never")  # a new process reads the store
    assert fresh.loaded("parent") == [*parent, "git_status"]
    child = fresh.loaded("child")
    assert "git_commit" not in child and "files_read" in child and "git_status" not in child
    with Store(db_url) as store:
        assert [e.tool for e in store.history("parent") if e.kind == "unloaded"] == []


def test_a_missing_parent_or_an_existing_child_is_refused_and_writes_nothing(
    make_trinket: MakeTrinket,
) -> None:
    trinket = parent_with_a_reveal(make_trinket)
    trinket.prepare("other", [user(CODE)])
    other = trinket.store.snapshot("other")
    with pytest.raises(SessionForkError, match="no session 'nope' to fork from"):
        trinket.fork("nope", "child")
    with pytest.raises(SessionForkError, match="'other' exists already"):
        trinket.fork("parent", "other")
    with pytest.raises(SessionForkError, match="into itself"):
        trinket.fork("parent", "parent")
    assert trinket.store.snapshot("child") is None
    assert trinket.store.snapshot("other") == other


def test_a_child_under_a_narrower_allow_list_gets_only_its_allowed_tools(
    make_trinket: MakeTrinket,
) -> None:
    parent_with_a_reveal(make_trinket).close()
    narrow = make_trinket(reveal="append", deny=["git_commit"])
    names = narrow.fork("parent", "child")
    assert "git_commit" not in names and "git_commit" in narrow.loaded("parent")
    narrow.handle_meta("child", "load_tools", {"tools": ["git_commit"]})
    assert "git_commit" not in narrow.prepare("child", [user(TRIP)]).loaded


def test_the_fork_command_copies_the_set_and_says_why_it_cannot(
    make_trinket: MakeTrinket, db_url: str
) -> None:
    trinket = parent_with_a_reveal(make_trinket)
    parent = trinket.loaded("parent")
    trinket.close()
    runner = CliRunner()
    done = runner.invoke(cli, ["fork", "parent", "sub", "--db", db_url, "--format", "json"])
    assert done.exit_code == 0, done.output
    assert [r["tool"] for r in json.loads(done.output)] == parent
    with Store(db_url) as store:
        assert store.snapshot("sub") is not None and store.snapshot("sub").names() == parent  # type: ignore[union-attr]
    again = runner.invoke(cli, ["fork", "parent", "sub", "--db", db_url])
    assert again.exit_code != 0 and "exists already" in again.output
    assert len(again.output.strip().splitlines()) == 1
