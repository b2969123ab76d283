"""``load_tools`` queries in the shapes models write, over real MCP servers' tool lists.

The catalog is what ``mcp-server-git``, ``mcp-server-time``, the filesystem and fetch servers
list (``bench/data/mcp/servers``, dumped from the running servers), each server a bundle, as
the gateway registers them.
"""

from __future__ import annotations

import pytest
from mcp_catalog import servers_catalog

from tooltray.memory.config import Settings
from tooltray.memory.retrieval.asks import read_ask
from tooltray.memory.retrieval.selector import lexical_selector
from tooltray.memory.tuning import SERVER_K
from tooltray.tools.spec import ToolSpec


def catalog() -> list[ToolSpec]:
    return servers_catalog("git", "time", "filesystem", "fetch")


SPECS = catalog()
NAMES = [s.name for s in SPECS]
BUNDLE_OF = {s.name: s.bundle for s in SPECS}


@pytest.mark.parametrize(
    ("query", "bundles", "text"),
    [
        ("server: Git\ntool: show the commit history", ("git",), "show the commit history"),
        (
            "Server: the filesystem MCP server\nTool: list a folder",
            ("filesystem",),
            "list a folder",
        ),
        ("server: git tool: recent commits", ("git",), "recent commits"),
        ("server: weather service\ntool: forecast", (), "weather service forecast"),
        ("show me the last commits", (), "show me the last commits"),
        ("Plan:\nAction: look up the weather", (), "Plan:\nAction: look up the weather"),
    ],
)
def test_server_lines_name_bundles_and_other_text_stays(
    query: str, bundles: tuple[str, ...], text: str
) -> None:
    ask = read_ask(query, NAMES, BUNDLE_OF)
    assert (ask.bundles, ask.text, ask.named) == (bundles, text, ())


@pytest.mark.parametrize(
    ("guess", "first"),
    [
        ("git_log", "git_log"),
        ("gitLog", "git_log"),
        ("filesystem__read_text_file", "read_text_file"),
        ("list_directories", "list_directory"),
        ("getCurrentTime", "get_current_time"),
    ],
)
def test_a_guessed_name_spells_the_real_one(guess: str, first: str) -> None:
    ask = read_ask(guess, NAMES, BUNDLE_OF)
    assert ask.named[0] == first
    assert ask.bundles == () and "_" not in ask.text


def test_a_guess_near_no_tool_names_none() -> None:
    assert read_ask("get_stock_price", NAMES, BUNDLE_OF).named == ()


def test_search_ranks_within_the_named_server_and_puts_a_spelled_name_first() -> None:
    selector = lexical_selector(SPECS, Settings(db="sqlite://"))
    answer = selector.search("server: filesystem\ntool: read a file")
    found = [c.name for c in answer if not c.mention]
    assert 1 < len(found) <= SERVER_K and all(BUNDLE_OF[n] == "filesystem" for n in found)
    assert found[0] in ("read_file", "read_text_file")
    loaded = {n for n in NAMES if BUNDLE_OF[n] == "filesystem"}
    rest = [c.name for c in selector.search("server: filesystem\ntool: read a file", loaded)]
    rest = [n for n in rest if n in BUNDLE_OF]  # the bundles line of the whole catalog's answer
    assert rest and not set(rest) & loaded  # the bundle all loaded: the whole catalog answers
    named = [c.name for c in selector.search("gitShow") if not c.mention]
    assert named[0] == "git_show" and len(named) == len(set(named))


def test_a_named_server_with_tools_past_the_answer_is_mentioned_by_name() -> None:
    """A server line's answer holds ``SERVER_K`` of the server's tools; where the server has
    more, its bundle is on the answer's bundles line, so a model whose tool is not among them
    loads the rest by name instead of asking for every tool's directory."""
    selector = lexical_selector(SPECS, Settings(db="sqlite://"))
    size = sum(b == "filesystem" for b in BUNDLE_OF.values())
    assert size > SERVER_K  # the premise: more tools than one answer holds
    answer = selector.search("server: filesystem\ntool: read a file")
    assert [c.name for c in answer if c.mention] == ["filesystem"]
    shown = [c.name for c in answer if not c.mention]
    almost = {n for n in NAMES if BUNDLE_OF[n] == "filesystem"} - set(shown[:1])
    last = selector.search("server: filesystem\ntool: read a file", almost - set(shown[1:2]))
    assert not [c for c in last if c.mention]  # every member left fits: nothing to mention
    small = selector.search("server: time\ntool: convert a time")  # two tools: both shown
    assert small and not [c for c in small if c.mention]
