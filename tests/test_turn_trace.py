"""A later turn's path through the public API (``bench/trace_turn.py``): the modules the README
names, and the turn's flow limits.

Limits on flow, not on files: the functions a turn enters (distinct code objects), and per public
call the transactions it begins and commits and its writes of the session row, counted by
SQLAlchemy events. A ``prepare`` reads in one transaction (its session, the learned signals) and
writes in one; every public call commits at most once.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
FUNCTIONS = 300
"""Ceiling on the library functions a later turn enters (issue 34's limit), so the turn does not
grow unnoticed. About 61 of them are comprehensions, which Python 3.11 counts as code
objects. The trace runs with INFO logging off: a test before it that turned INFO on (caplog)
would add the plan's log line."""


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("trace_turn", ROOT / "bench" / "trace_turn.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("trace") / "trace.db"
    flow: dict[str, Any] = _script().flow(f"sqlite:///{db}")
    return flow


def _readme_modules() -> set[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    part = text.split("One turn passes through these modules:")[1].split("Where things go:")[0]
    out, folder = set(), ""
    for path in re.findall(r"`((?:memory/|tools/|events/|core/|retrieval/)?[\w/]+\.py)`", part):
        if path.startswith(("memory/", "tools/", "events/")):
            folder = path.rsplit("/", 1)[0]
        elif "/" in path:
            path = f"memory/{path}"
        else:
            path = f"{folder}/{path}"
        out.add("tooltray." + path[:-3].replace("/", "."))
    return {m for m in out if ".agent." not in m}


def test_a_later_turn_enters_the_modules_the_readme_names(traced: dict[str, Any]) -> None:
    entered = {f.split(":", 1)[0] for f in traced["functions"]}
    named = _readme_modules()
    assert len(named) >= 15, f"the README's list was not read: {sorted(named)}"
    assert named <= entered, f"named but not entered: {sorted(named - entered)}"


def test_a_later_turn_keeps_its_flow_limits(traced: dict[str, Any]) -> None:
    calls = traced["calls"]
    assert set(calls) == {"prepare", "load_tools", "tool-used", "turn-completed"}
    assert calls["prepare"]["begin"] <= 2, f"a prepare reads once and writes once: {calls}"
    assert calls["prepare"]["session write"] == 1, f"a prepare writes its session once: {calls}"
    assert calls["load_tools"]["begin"] == 1, f"a search reads what prepare read: {calls}"
    assert all(c["commit"] <= 1 for c in calls.values()), f"one commit per public call: {calls}"
    assert all(c["session write"] <= 1 for c in calls.values()), calls
    assert len(traced["functions"]) <= FUNCTIONS, f"a turn enters {len(traced['functions'])}"
