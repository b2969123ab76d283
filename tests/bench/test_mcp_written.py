"""The model-written searches (``bench/mcp_written.py``) as committed: every need of every
catalog has one per protocol, they group back into each turn's gold, and the writer's task names
no tool (a writer that saw tool names would not be writing as a model does)."""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import mcp_search  # noqa: E402
import mcp_written  # noqa: E402

CORPUS = BENCH / "data" / "mcp" / "corpus"


@pytest.mark.parametrize("corpus", mcp_written.CORPORA)
def test_every_need_has_one_written_search_per_protocol(corpus: str) -> None:
    _, gold = mcp_written.needs(corpus)
    text = (CORPUS / corpus / mcp_written.FILE).read_text("utf-8")
    rows = [json.loads(line) for line in text.splitlines()]
    for protocol in mcp_written.PROTOCOLS:
        mine = [r for r in rows if r["protocol"] == protocol]
        assert sorted(r["id"].rsplit(":", 1)[0] for r in mine) == sorted(gold)
        assert all(r["query"].strip() and r["tool"] == gold[r["id"][:-len(protocol) - 1]]["tool"]
                   for r in mine)  # fmt: skip


@pytest.mark.parametrize("corpus", mcp_written.CORPORA)
def test_written_groups_cover_each_turns_gold(corpus: str) -> None:
    text = (CORPUS / corpus / "queries.dev.jsonl").read_text("utf-8")
    turns = {r["id"]: set(r["gold"]) for r in map(json.loads, text.splitlines())}
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for group in mcp_search.written_groups(CORPUS, corpus):
        assert len(group["queries"]) == len(group["tools"])
        found[(group["turn"], group["shape"])].update(group["tools"])
    for protocol in mcp_written.PROTOCOLS:
        assert {t: found[(t, protocol)] for t in turns} == turns


def test_the_writers_task_names_no_tool(tmp_path: Path) -> None:
    mcp_written.write_needs("tool_assistant", 2, tmp_path)
    names = {json.loads(line)["name"] for line in (CORPUS / "mcp70" / "tools.jsonl").open()}
    bare = {n.split("_", 1)[1] for n in names if "_" in n} | names
    text = " ".join(p.read_text("utf-8") for p in sorted(tmp_path.iterdir()))
    said = set(re.findall(r"[A-Za-z][\w-]*_[\w-]+", text))
    assert len(list(tmp_path.glob("needs-*.jsonl"))) == 2 and "written-0.jsonl" in text
    assert not said & names and not said & {b for b in bare if "_" in b}
