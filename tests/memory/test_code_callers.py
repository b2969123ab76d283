"""Tools callable from code (the ``code_callers`` setting) on Anthropic and OpenAI Responses,
built by a real trinket over a two-turn session and checked against each SDK's request types."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tooltray.memory import Settings, ToolLoaderTrinket
from tooltray.memory.core.prompt import DIRECT, prefix_digest
from tooltray.tools.codecall import CALLER, CODE_TOOL
from tooltray.tools.demo import demo_registry
from tooltray.tools.render import canonical_json

from .test_provider_requests import two_turns, validate


def functions(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every function tool of ``tools=``, inside Responses namespaces too."""
    inner = [t for n in tools if n.get("type") == "namespace" for t in n["tools"]]
    every = [*tools, *inner]
    return [t for t in every if t.get("type", "function") == "function" and "name" in t]


@pytest.mark.parametrize("path", ["anthropic", "responses"])
@pytest.mark.parametrize("mode", ["both", "code"])
def test_every_selected_tool_is_callable_from_code(tmp_path: Path, path: str, mode: str) -> None:
    db = f"sqlite:///{tmp_path / 'tooltray.db'}"
    settings = Settings(db=db, context_window=8192, path=path, code_callers=mode)
    with ToolLoaderTrinket(demo_registry(), settings=settings) as trinket:
        first, second, view = two_turns(trinket)
    validate(path, first)
    validate(path, second)
    assert canonical_json(first["tools"]) == canonical_json(second["tools"])  # byte-stable
    assert first["tools"][-1] == CODE_TOOL[path]  # the code tool, last
    expected = ["direct", CALLER[path]] if mode == "both" else [CALLER[path]]
    marked = [t for t in functions(first["tools"]) if t["name"] not in DIRECT]
    assert len(marked) > 5 and all(t["allowed_callers"] == expected for t in marked)
    direct = [t for t in functions(first["tools"]) if t["name"] in DIRECT]
    assert all("allowed_callers" not in t for t in direct)
    assert view.prefix_hash == prefix_digest(view.system_prefix, canonical_json(view.tools()))


def test_off_and_other_paths_leave_tools_alone(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'tooltray.db'}"
    for path, mode in (("anthropic", "off"), ("openai", "both")):
        settings = Settings(db=db, context_window=8192, path=path, code_callers=mode)
        with ToolLoaderTrinket(demo_registry(), settings=settings) as trinket:
            tools = trinket.prepare(path, [{"role": "user", "content": "Weather?"}]).tools()
        assert "allowed_callers" not in canonical_json(tools)
        assert all(t.get("type") != CODE_TOOL["anthropic"]["type"] for t in tools)


def test_the_python_api_holds_between_boundaries_and_later_tools_are_announced(
    tmp_path: Path,
) -> None:
    from tooltray.memory.adapters import CodeMode

    db = f"sqlite:///{tmp_path / 'tooltray.db'}"
    settings = Settings(db=db, context_window=8192, path="responses", reveal="append")
    code = CodeMode()
    history: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris tomorrow?"}]
    with ToolLoaderTrinket(demo_registry(), settings=settings) as trinket:
        first = trinket.prepare("c", history)
        api = code.api(first)
        assert code.news(first) == ""  # the API shows everything loaded so far
        trinket.handle_meta("c", "load_tools", {"tools": ["git_commit"]})
        later = trinket.prepare("c", history)
        assert CodeMode().api(later) == api  # the same bytes: the code tool is not rewritten
        news = code.news(later)
        assert news.startswith("New functions you can call from code:")
        assert "def git_commit(*, " in news and "def git_commit(" not in api
        assert code.news(trinket.prepare("c", history)) == ""  # announced once
    assert "def load_tools" not in api and "def call_tool" not in api
    assert api.count("\ndef ") == len([s for s in first.specs if s.name not in DIRECT])
