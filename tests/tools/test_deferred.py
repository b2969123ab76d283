"""The native-deferral render option: loaded in full, the search tool, the rest deferred."""

from __future__ import annotations

import pytest

from tooltray.tools.deferred import SEARCH_TOOL, render_deferred, search_answer
from tooltray.tools.errors import ConfigError
from tooltray.tools.render import anthropic_tool, openai_responses_tool
from tooltray.tools.spec import Bundle, ToolSpec

A = ToolSpec(name="a", description="Tool a.", bundle="one")
B = ToolSpec(name="b", description="Tool b.", bundle="two")
C = ToolSpec(name="c", description="Tool c.", bundle="two")
D = ToolSpec(name="d", description="Tool d.")


def test_anthropic_defers_all_but_the_loaded_and_the_search_tool() -> None:
    tools = render_deferred("anthropic", [A], [B, D])
    assert tools[:2] == [anthropic_tool(A), anthropic_tool(SEARCH_TOOL)]
    assert tools[2:] == [
        {**anthropic_tool(B), "defer_loading": True},
        {**anthropic_tool(D), "defer_loading": True},
    ]


def test_responses_groups_deferred_tools_in_one_namespace_per_bundle() -> None:
    bundles = [Bundle(name="two", description="the second group")]
    tools = render_deferred("responses", [A], [B, D, C], bundles)
    assert tools[0] == openai_responses_tool(A)
    assert tools[1]["type"] == "tool_search" and tools[1]["execution"] == "client"
    assert tools[2]["type"] == "namespace" and tools[2]["description"] == "the second group"
    assert [t["name"] for t in tools[2]["tools"]] == ["b", "c"]
    assert all(t["defer_loading"] for t in tools[2]["tools"])
    assert tools[3] == {**openai_responses_tool(D), "defer_loading": True}


def test_search_answers_reference_or_carry_the_found_tools() -> None:
    ref = search_answer("anthropic", "toolu_1", [B])
    assert ref == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "tool_reference", "tool_name": "b"}],
    }
    assert search_answer("anthropic", "toolu_2", [])["content"][0]["type"] == "text"
    out = search_answer("responses", "call_1", [B])
    assert out["type"] == "tool_search_output" and out["tools"] == [openai_responses_tool(B)]


def test_paths_without_native_deferral_are_refused() -> None:
    for path in ("openai", "text"):
        with pytest.raises(ConfigError, match="No native deferral"):
            render_deferred(path, [A], [B])
