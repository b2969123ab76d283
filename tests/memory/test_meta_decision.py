"""A meta-tool call as the prepare pipeline: one handler per name decides an ``Outcome``, and
``decision.meta`` turns it into one ``Decision`` (history rows, notices, the fallback mark) on
hand-made values, with no store, journal or embedder."""

from __future__ import annotations

import pytest

from tooltray.memory.core import decision as decide
from tooltray.memory.core.decision import Marks, Snap
from tooltray.memory.core.session import SessionState
from tooltray.memory.metatools.meta_tools import (
    HANDLERS,
    META_TOOL_NAMES,
    MetaCall,
    Outcome,
    not_meta,
)
from tooltray.memory.store.records import Changes, empty_snapshot
from tooltray.tools.errors import MetaToolArgumentError
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec

pytestmark = pytest.mark.no_embedder
TOOLS = [ToolSpec(name=n, description=f"{n} a thing.") for n in ("alpha", "beta", "gamma")]


def _call(name: str, arguments: object) -> MetaCall:
    state = SessionState("s", empty_snapshot("s"))
    return MetaCall(name, arguments, ToolRegistry(TOOLS), state, lambda q: [], lambda h, o: h, 8)


def test_every_meta_tool_has_one_handler_and_other_names_are_refused() -> None:
    assert tuple(HANDLERS) == META_TOOL_NAMES
    with pytest.raises(MetaToolArgumentError, match="not a meta-tool"):
        HANDLERS.get("load_tool", not_meta)(_call("load_tool", {}))


def test_a_named_load_is_an_escape_with_its_row_and_signals() -> None:
    out = HANDLERS["load_tools"](_call("load_tools", {"tools": ["alpha"]}))
    dec = decide.meta(Snap(empty_snapshot("s")), out)
    (changes,) = dec.changes
    assert [ld.name for ld in changes.loads] == ["alpha"]
    assert [(e.kind, e.detail) for e in changes.events] == [("escape", "load_tools tools: alpha")]
    assert [(n.kind, n.tools, n.detail) for n in dec.notices] == [
        ("tools_loaded", ("alpha",), "escape"),
        ("escape_hatch", ("alpha",), "load_tools"),
    ]
    assert dec.marks is None and out.changes.events == []  # the outcome itself is not changed


def test_a_fallback_opens_the_turns_fallback_and_loads_every_tool() -> None:
    out = HANDLERS["fallback"](_call("fallback", {}))
    snap = Snap(empty_snapshot("s"), Marks(grown_turn=0))
    dec = decide.meta(snap, out)
    assert dec.marks == Marks(fallback_turn=0, grown_turn=0)
    assert [n.detail for n in dec.notices] == ["fallback", "fallback"]
    assert out.text.startswith("Fallback: all 3 allowed tools")


def test_an_unload_signals_only_what_left() -> None:
    out = Outcome(Changes(), "Unloaded: beta.", removed=["beta"])
    dec = decide.meta(Snap(empty_snapshot("s")), out)
    assert [(n.kind, n.tools, n.detail) for n in dec.notices] == [
        ("tools_unloaded", ("beta",), "unloaded")
    ]
    assert dec.changes[0].events == []


def test_a_refused_call_is_only_its_history_row() -> None:
    dec = decide.refused_meta(Snap(empty_snapshot("s")), "load_tools", "bad arguments")
    (changes,) = dec.changes
    assert [(e.kind, e.tool, e.detail) for e in changes.events] == [
        ("refused", "load_tools", "bad arguments")
    ]
    assert dec.notices == () and changes.loads == [] and dec.marks is None
