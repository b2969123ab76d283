"""Chinese queries over a server whose descriptions are Chinese (amap-maps, as its MCP server
lists them: ``bench/data/mcp/servers``), beside English servers, by the lexical half alone."""

from __future__ import annotations

import pytest
from mcp_catalog import servers_catalog

from tooltray.memory.config import Settings
from tooltray.memory.retrieval.scoring import cjk_terms, terms
from tooltray.memory.retrieval.selector import lexical_selector
from tooltray.tools.spec import ToolSpec


def catalog() -> list[ToolSpec]:
    return servers_catalog("amap-maps", "git", "time", "filesystem", "fetch")


def test_cjk_runs_become_bigrams_and_other_text_is_untouched() -> None:
    assert cjk_terms("查询天气") == ["查询", "询天", "天气"]
    assert cjk_terms("路") == ["路"]
    assert terms("Read the files in src/") == ["read", "file", "src"]


@pytest.mark.parametrize(
    ("query", "tool"),
    [
        ("查询北京明天的天气", "maps_weather"),
        ("这个IP地址在哪里定位", "maps_ip_location"),
        ("规划从天安门到故宫的步行路线", "maps_direction_walking"),
    ],
)
def test_a_chinese_query_finds_the_chinese_described_tool(query: str, tool: str) -> None:
    selector = lexical_selector(catalog(), Settings(db="sqlite://"))
    answer = [c.name for c in selector.lexical(query)]
    assert answer[:2].count(tool) == 1, answer
