"""``load_tools`` asked for a tool the session already has: the answer says it is loaded.

A small catalog is shown whole (every tool loaded on the first turn), so a search excludes every
tool; the model that searches anyway must learn the tool is there, not that nothing matched.
Real embedder, real SQLite store.
"""

from __future__ import annotations

from mcp_catalog import servers_catalog

from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.metatools.meta_tools import LOAD_TOOLS
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec

from .conftest import MakeTrinket, user

OBJ = {"type": "object", "properties": {"city": {"type": "string"}}}
TOOLS = [
    ToolSpec(name="getWeather", description="Current weather for a city.", parameters=OBJ),
    ToolSpec(name="getForecast", description="Five-day forecast for a city.", parameters=OBJ),
    ToolSpec(name="sendEmail", description="Send an email to a contact.", parameters=OBJ),
]


def _whole(make_trinket: MakeTrinket) -> tuple[ToolLoaderTrinket, str]:
    trinket = make_trinket(reg=ToolRegistry(TOOLS))
    trinket.prepare("s", [user("What is the weather in Oslo?")])
    assert set(trinket.loaded("s")) >= {t.name for t in TOOLS}  # shown whole
    return trinket, "s"


def test_a_loaded_tools_name_answers_already_loaded(make_trinket: MakeTrinket) -> None:
    trinket, sid = _whole(make_trinket)
    answer = trinket.handle_meta(sid, LOAD_TOOLS, {"query": "getWeather"})
    assert "Already loaded: getWeather" in answer
    assert "Nothing matched" not in answer


def test_a_query_only_loaded_tools_match_names_them(make_trinket: MakeTrinket) -> None:
    trinket, sid = _whole(make_trinket)
    answer = trinket.handle_meta(sid, LOAD_TOOLS, {"query": "send an email"})
    assert answer.startswith("Already loaded: sendEmail")
    assert "Loaded:" not in answer


def test_a_query_with_a_new_match_loads_it_and_names_no_loaded_one(
    make_trinket: MakeTrinket,
) -> None:
    trinket = make_trinket(reg=ToolRegistry(TOOLS))
    answer = trinket.handle_meta("fresh", LOAD_TOOLS, {"query": "send an email"})
    assert "sendEmail" in answer and "Already loaded" not in answer


def test_a_selected_session_asking_for_its_loaded_tool_hears_it_is_loaded(
    make_trinket: MakeTrinket,
) -> None:
    """Seven real MCP tools on price: the opening holds ``fetch`` for a URL, and a search for
    it whose only other matches are weak (bundle mentions alone) says it is loaded."""
    specs = servers_catalog("time") + servers_catalog("fetch") + servers_catalog("git")[:4]
    trinket = make_trinket(reg=ToolRegistry(specs), cost_profile="price")
    trinket.prepare("s", [user("Read https://example.org/notes.html for me")])
    assert "fetch" in trinket.loaded("s") and "git_status" not in trinket.loaded("s")
    answer = trinket.handle_meta("s", LOAD_TOOLS, {"query": "fetch a web page"})
    assert answer.startswith("Already loaded: fetch") and "Nothing matched" not in answer
