"""``load_tools`` answers over a server that registers aliases: exact twins share one place.

The Wikipedia MCP server lists every tool twice (``get_article`` and ``wikipedia_get_article``,
same description and schema; ``bench/data/mcp/servers``, dumped from the running server).
"""

from __future__ import annotations

from mcp_catalog import servers_catalog

from tooltray.memory.config import Settings
from tooltray.memory.retrieval.places import Twins
from tooltray.memory.retrieval.selector import lexical_selector
from tooltray.memory.retrieval.twins import twin_key
from tooltray.memory.tuning import SERVER_K
from tooltray.tools.spec import ToolSpec

SPECS = servers_catalog("wikipedia", "git", "time", "filesystem", "fetch")
KEY = {s.name: twin_key(s) for s in SPECS}
TWIN = {a.name: b.name for a in SPECS for b in SPECS if a is not b and KEY[a.name] == KEY[b.name]}
SELECTOR = lexical_selector(SPECS, Settings())


def test_the_catalog_has_the_servers_aliases() -> None:
    assert TWIN["get_article"] == "wikipedia_get_article"
    assert len(TWIN) == 22


def test_a_server_named_answer_gives_its_places_to_distinct_tools() -> None:
    found = SELECTOR.lexical("server: wikipedia\ntool: article sections")
    answer = [c.name for c in found if not c.mention]  # the server's bundle is mentioned too
    assert len({KEY[n] for n in answer}) == SERVER_K
    assert all(TWIN[n] in answer for n in answer)


def test_an_answer_over_the_catalog_brings_each_tool_with_its_twin() -> None:
    answer = [c.name for c in SELECTOR.lexical("summary of a wikipedia article")]
    wiki = [n for n in answer if n in TWIN]
    assert wiki and all(TWIN[n] in answer for n in wiki)


def test_a_loaded_tools_twin_takes_no_place() -> None:
    query = "get the full content of a wikipedia article"
    answer = [c.name for c in SELECTOR.lexical(query, ["get_article"])]
    assert answer and "wikipedia_get_article" not in answer


def spec(name: str, description: str, bundle: str = "wiki") -> ToolSpec:
    return ToolSpec(name=name, description=description, parameters={}, bundle=bundle)


def test_a_twin_later_in_the_order_takes_no_place() -> None:
    specs = [spec("read", "read a page"), spec("write", "write a page")]
    twins = Twins([*specs, spec("wiki_read", "Read a  page")])
    assert twins.doubles([0, 2, 1]) == 1
    assert twins.places([2, 0, 1], 2, lambda j: True) == [2, 0, 1]
    assert twins.places([0, 1, 2], 1, lambda j: j != 2) == [0]
    assert twins.beside(["read"]) == {"read", "wiki_read"}


def test_a_pasted_description_under_another_name_is_another_tool() -> None:
    text = "The API for deleting a reminder item"
    twins = Twins([spec("DeleteReminder", text), spec("ModifyReminder", text)])
    assert twins.of == {}
    assert twins.beside(["DeleteReminder"]) == {"DeleteReminder"}
