"""The session bench's ``--searches``: the simulated model queries for each missing tool with
that need's own model-written search (the corpus's ``searches.jsonl``) instead of the user's
request once a turn; without the option, or without the file, it queries as before."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import corpora  # noqa: E402
import session  # noqa: E402
from mcp_queries import SHAPES  # noqa: E402

MCP = Path(__file__).resolve().parents[2] / "bench" / "data" / "mcp" / "corpus"
TOOLS = [
    {"name": "get_forecast", "description": "Weather forecast for a city.", "group": "weather"},
    {"name": "get_alerts", "description": "Weather alerts for a region.", "group": "weather"},
    {"name": "book_taxi", "description": "Book a taxi ride to an address.", "group": "rides"},
    {"name": "cancel_taxi", "description": "Cancel a booked taxi ride.", "group": "rides"},
    {"name": "send_mail", "description": "Send an email message.", "group": "mail"},
]
KINDS = ("invoice", "playlist", "ticket", "repository", "spreadsheet", "calendar", "photo")
VERBS = ("create", "delete", "list", "rename", "export", "share")
OTHERS = [  # enough tools that no opening holds the catalog whole
    {"name": f"{verb}_{kind}", "description": f"{verb.title()} a {kind}.", "group": kind}
    for kind in KINDS
    for verb in VERBS
]
NEEDS = {"get_forecast": "weather forecast for a city", "book_taxi": "book a taxi ride"}


@pytest.fixture(autouse=True)
def no_searches_left() -> Iterator[None]:
    yield
    session.SEARCHES.clear()


def _corpus(root: Path) -> Path:
    """One turn whose request says nothing of its two needs, and each need's search."""
    folder = root / "plain"
    folder.mkdir()
    turn = {"id": "c_t0", "query": "Do the two things we said.", "gold": [*NEEDS], "turns": None}
    searches = [
        {"turn": "c_t0", "tool": tool, "shape": "sentence", "query": text}
        for tool, text in NEEDS.items()
    ]
    (folder / "tools.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TOOLS + OTHERS))
    (folder / "queries.dev.jsonl").write_text(json.dumps(turn) + "\n")
    (folder / "searches.jsonl").write_text("".join(json.dumps(s) + "\n" for s in searches))
    return folder


def test_mixed_picks_one_search_per_need_and_every_shape() -> None:
    rows = [json.loads(line) for line in (MCP / "mcp20" / "searches.jsonl").open()]
    mixed = session.model_searches(MCP, "mcp20", {}, "mixed")
    needs = {(r["turn"], r["tool"]) for r in rows}
    assert len(mixed) == len(needs)
    shape_of = {(r["turn"], r["tool"], r["query"]): r["shape"] for r in rows}
    shapes = Counter(
        shape_of[(f"{conv}_t{number}", tool, text)] for (conv, number, tool), text in mixed.items()
    )
    assert set(shapes) == set(SHAPES)
    assert min(shapes.values()) > len(needs) // 8
    assert session.model_searches(MCP, "mcp20", {}, "request") == {}


def test_each_missing_tool_is_searched_for_with_its_own_search(tmp_path: Path) -> None:
    folder = _corpus(tmp_path)
    registry, names = corpora.load_registry(tmp_path, folder.name)
    convs = corpora.load_conversations(tmp_path, folder.name, names)
    settings = session.base_settings("openai")
    session.SEARCHES.update(session.model_searches(tmp_path, folder.name, names, "sentence"))
    assert {("c", 0, tool): text for tool, text in NEEDS.items()} == session.SEARCHES
    url = f"sqlite:///{tmp_path / 'model.db'}"
    [model] = session.replay_continuous(registry, convs, url, settings)
    session.SEARCHES.clear()
    url = f"sqlite:///{tmp_path / 'request.db'}"
    [request] = session.replay_continuous(registry, convs, url, settings)
    assert set(model.gold) <= set(model.loaded_end)
    assert model.missing_first == [*NEEDS]
    assert model.escape_kinds == ["query", "query"]
    assert request.escape_kinds.count("query") == 1
