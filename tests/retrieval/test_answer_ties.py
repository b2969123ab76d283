"""A ``load_tools`` answer grows past its ``SEARCH_K`` places only for near ties, over the real-MCP
dev catalog of 20 servers (``bench/data/mcp/corpus/mcp20``: their real tool lists), by the lexical
half (the rule reads scores, whichever retriever made them). ``convert_*`` tools are look-alikes a
units query cannot tell apart; ``git diff`` has three close matches and then a gap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tooltray.memory.config import Settings
from tooltray.memory.retrieval.selector import IndexSelector, lexical_selector
from tooltray.memory.tuning import SEARCH_K, TIE_K, TIE_SHARE
from tooltray.tools.spec import ToolSpec

TOOLS = Path(__file__).resolve().parents[2] / "bench/data/mcp/corpus/mcp20/tools.jsonl"


@pytest.fixture(scope="module")
def selector() -> IndexSelector:
    specs = []
    for line in TOOLS.read_text("utf-8").splitlines():
        t = json.loads(line)
        schema = t["parameters"] or {"type": "object"}
        spec = ToolSpec(name=t["name"], description=t["description"] or t["name"],
                        parameters=schema, bundle=t["group"])  # fmt: skip
        specs.append(spec)
    return lexical_selector(specs, Settings(db="sqlite://"))


def test_near_ties_past_the_places_join_the_answer(selector: IndexSelector) -> None:
    answer = [c for c in selector.lexical("convert a reading into the same units") if not c.mention]
    assert len(answer) == SEARCH_K + TIE_K
    best = max(c.score or 0.0 for c in answer)
    assert all((c.score or 0.0) >= TIE_SHARE * best for c in answer[SEARCH_K:])
    assert all(c.name.startswith("unit-converter_convert_") for c in answer)


def test_a_gap_after_the_best_keeps_the_answer_to_its_places(selector: IndexSelector) -> None:
    answer = [c for c in selector.lexical("git diff") if not c.mention]
    assert [c.name for c in answer[:3]] == [
        "git_git_diff",
        "git_git_diff_staged",
        "git_git_diff_unstaged",
    ]
    assert len(answer) <= SEARCH_K
