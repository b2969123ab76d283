"""The real-MCP dev corpus (issue 35) as committed: every file parses, every session's and every
search's tool is in its catalog, the catalogs nest and grow, and the dumps it was built from agree.

These read the committed files through the same readers the benches use (``read_catalog`` with
``sanitize=True`` and ``corpora.load_conversations``), so a corpus the benches cannot replay fails
here first.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import corpora  # noqa: E402
import mcp_corpus  # noqa: E402
import mcp_queries  # noqa: E402
import mcp_servers  # noqa: E402

from tooltray.tools.importers.catalog import read_catalog  # noqa: E402

CORPUS = BENCH / "data" / "mcp" / "corpus"
SIZES = list(mcp_corpus.SIZES)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("corpus", SIZES)
def test_sessions_and_searches_use_tools_of_the_catalog(corpus: str) -> None:
    catalog = read_catalog(CORPUS / corpus / "tools.jsonl", sanitize=True, source=corpus)
    registered = {spec.name for spec in catalog.tools}
    names = {orig: new for new, orig in catalog.renamed.items()}
    convs = corpora.load_conversations(CORPUS, corpus, names)
    assert convs, f"{corpus} has no sessions"
    gold = {g for conv in convs for turn in conv.turns for g in turn.gold}
    assert gold <= registered, sorted(gold - registered)[:5]
    searches = _jsonl(CORPUS / corpus / "searches.jsonl")
    assert {names.get(s["tool"], s["tool"]) for s in searches} <= registered
    assert {s["shape"] for s in searches} == set(mcp_queries.SHAPES)


@pytest.mark.parametrize("corpus", SIZES)
def test_every_tool_has_a_server_group_and_a_schema(corpus: str) -> None:
    rows = _jsonl(CORPUS / corpus / "tools.jsonl")
    meta = json.loads((CORPUS / corpus / "meta.json").read_text("utf-8"))
    assert {r["group"] for r in rows} == set(meta["servers"])
    assert all(isinstance(r["parameters"], dict) for r in rows)
    assert len(rows) == meta["tools"]


def test_catalogs_nest_and_grow() -> None:
    servers = [
        set(json.loads((CORPUS / c / "meta.json").read_text("utf-8"))["servers"]) for c in SIZES
    ]
    assert servers[0] < servers[1] < servers[2]
    assert len(servers[0]) == 20 and len(servers[1]) == 70 and len(servers[2]) >= 300


def test_servers_dumped_later_join_the_largest_catalog_only() -> None:
    """mcp20 and mcp70 are drawn from the first build's servers (``"wave": 1``), so dumping more
    servers leaves them as measured; the committed catalogs are what the script chooses."""
    servers = mcp_corpus.load_servers()
    tasks = _jsonl(mcp_corpus.TASKS)
    first = {e["name"] for e in mcp_servers.read_registry() if e.get("wave") == 1}
    assert len(first) == 100 and first <= set(servers)
    only_first = {n: r for n, r in servers.items() if n in first}
    for corpus, size in mcp_corpus.SIZES.items():
        chosen = mcp_corpus.choose_servers(tasks, servers, size)
        meta = json.loads((CORPUS / corpus / "meta.json").read_text("utf-8"))
        assert chosen == list(meta["servers"])
        if size <= 70:
            assert chosen == mcp_corpus.choose_servers(tasks, only_first, size)
        else:
            assert set(chosen) - first and first <= set(chosen)


def test_multi_server_sessions_and_unnamed_generic_servers() -> None:
    """Some sessions cross servers, and some need filesystem/fetch/shell without naming them."""
    rows = _jsonl(CORPUS / "mcp70" / "tools.jsonl")
    group = {r["name"]: r["group"] for r in rows}
    queries = _jsonl(CORPUS / "mcp70" / "queries.dev.jsonl")
    by_session: dict[str, set[str]] = {}
    for q in queries:
        by_session.setdefault(q["id"].rsplit("_t", 1)[0], set()).update(group[g] for g in q["gold"])
    assert sum(len(s) >= 2 for s in by_session.values()) >= len(by_session) // 3
    implicit = {"fetch_fetch", "filesystem_write_file", "cli-mcp-server_run_command"}
    unnamed = [
        q
        for q in queries
        if implicit & set(q["gold"])
        and not any(w in q["query"].lower() for w in ("filesystem", "fetch", "shell", "cli-mcp"))
    ]
    assert len(unnamed) >= len(by_session) // 3


def test_dumped_servers_list_real_tools() -> None:
    servers = mcp_corpus.load_servers()
    assert len(servers) >= 300
    for record in servers.values():
        assert record["tools"] and all(t["name"] for t in record["tools"])
        assert record["provenance"] and record["source"]


def test_query_shapes_come_from_the_request() -> None:
    out = mcp_queries.shapes(
        "Which city is at the longitude and latitude of (104.07, 30.66)?",
        "amap-maps",
        "maps_regeocode Convert longitude and latitude coordinates into an address",
        None,
    )
    assert out["server_tool"].startswith("server: amap maps\ntool: ")
    assert "regeocode" not in out["keywords"] and "longitude" in out["keywords"]
    assert out["guessed_name"].count("_") >= 1


def test_a_need_sentence_is_the_tasks_own_and_says_something() -> None:
    text = "Hi! Which city is at the longitude and latitude (104.07, 30.66)?"
    task = {"id": "verse_Q1", "query": text, "needs": [["amap-maps", "maps_regeocode"]]}
    turn = mcp_corpus.conversation(task)[0]  # verse_Q1 draws the fetch preamble
    regeocode = {"name": "maps_regeocode", "description": "将坐标转换为地址"}
    servers = {"amap-maps": {"tools": [regeocode]},
               "fetch": {"tools": [{"name": "fetch", "description": "Fetch a URL."}]}}  # fmt: skip
    names = [f"{s}_{t}" for s, t in turn["needs"]]
    rows = mcp_queries.searches_for("t", turn, names, servers)
    sentence = next(
        r["query"] for r in rows if r["tool"].startswith("amap") and r["shape"] == "sentence"
    )
    assert turn["query"].startswith("First read")
    assert sentence.startswith("Which city")
    assert all(r["query"].strip() for r in rows)
