"""``unload_tools`` takes every name ``load_tools`` takes; an escape keeps what it asked for."""

from __future__ import annotations

from tooltray.memory.store import Store

from .conftest import MakeTrinket, user


def test_unload_takes_the_bundle_name_load_took(make_trinket: MakeTrinket) -> None:
    trinket = make_trinket(context_window=8192)
    trinket.prepare("s", [user("what is on my calendar tomorrow?")])
    trinket.handle_meta("s", "load_tools", {"tools": ["weather"]})
    weather = {s.name for s in trinket.registry.allowed() if s.bundle == "weather"}
    assert weather <= set(trinket.loaded("s"))
    text = trinket.handle_meta("s", "unload_tools", {"tools": ["weather"]})
    assert text.startswith("Unloaded: ")
    assert not weather & set(trinket.loaded("s"))


def test_unload_of_an_unloaded_bundle_says_not_loaded(make_trinket: MakeTrinket) -> None:
    trinket = make_trinket(context_window=8192)
    trinket.prepare("s", [user("what is on my calendar tomorrow?")])
    before = trinket.loaded("s")
    text = trinket.handle_meta("s", "unload_tools", {"tools": ["shopping"]})
    assert "Not loaded: shopping" in text and trinket.loaded("s") == before


def test_an_escape_records_what_the_model_asked_for(make_trinket: MakeTrinket, db_url: str) -> None:
    """A query escape keeps its query, a bundle or tool escape the names it gave (it was a bare
    ``load_tools`` before), and one that gave both keeps both."""
    trinket = make_trinket(context_window=8192)
    trinket.prepare("s", [user("what is on my calendar tomorrow?")])
    trinket.handle_meta("s", "load_tools", {"query": "convert 20 euros to dollars"})
    trinket.handle_meta("s", "load_tools", {"tools": ["git"]})
    trinket.handle_meta("s", "load_tools", {"tools": ["shopping", "weather"]})
    trinket.handle_meta("s", "load_tools", {"tools": ["contacts"], "query": "email Dana"})
    trinket.handle_meta("s", "load_tools", {"tools": ["git"]})  # loads nothing new: no escape
    trinket.flush()
    with Store(db_url) as store:
        details = [e.detail for e in store.history("s") if e.kind == "escape"]
    assert details == [
        "load_tools query: convert 20 euros to dollars",
        "load_tools tools: git",
        "load_tools tools: shopping, weather",
        "load_tools tools: contacts; query: email Dana",
    ]
