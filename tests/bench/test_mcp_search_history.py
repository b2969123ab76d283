"""``bench/mcp_search.py --past-split``: each search runs on a store that learned from the other
fold's sessions only (the session bench's own replay), never from its own conversation's."""

from __future__ import annotations

import sys
from pathlib import Path

from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import corpora  # noqa: E402
import mcp_search  # noqa: E402

from tooltray.tools.demo import demo_registry  # noqa: E402

CONVS = [
    corpora.Conversation(
        "trip", (corpora.Turn("Find flights to Lisbon.", ("travel_search_flights",)),)
    ),
    corpora.Conversation("mail", (corpora.Turn("Email Dana the notes.", ("email_send",)),)),
    corpora.Conversation("code", (corpora.Turn("Read src/app.py.", ("files_read",)),)),
]


def learned_sessions(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return {r[0] for r in conn.execute(text("SELECT session_id FROM learn_requests"))}
    finally:
        engine.dispose()


def test_each_fold_searches_on_the_other_folds_history(tmp_path: Path) -> None:
    searches = [{"turn": f"{c.id}_t0", "tool": c.turns[0].gold[0]} for c in CONVS]
    settings = mcp_search.base_settings("openai")
    groups = mcp_search.stores(tmp_path, demo_registry(), CONVS, settings, searches, True)
    seen = []
    for url, rows in groups:
        mine = {row["turn"].split("_t")[0] for _, row in rows}
        learned = {sid.split("@")[0] for sid in learned_sessions(url)}
        assert learned and not learned & mine, (learned, mine)
        assert learned | mine == {c.id for c in CONVS}
        seen += [i for i, _ in rows]
    assert sorted(seen) == [0, 1, 2]  # every search measured once
    plain = list(mcp_search.stores(tmp_path, demo_registry(), CONVS, settings, searches, False))
    assert len(plain) == 1 and [i for i, _ in plain[0][1]] == [0, 1, 2]


def searched(url: str) -> list[tuple[str, str]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT session_id, text FROM learn_searches"))
            return [(r[0], r[1]) for r in rows]
    finally:
        engine.dispose()


def test_the_history_learns_its_model_written_searches_never_the_measured_folds(
    tmp_path: Path,
) -> None:
    """With ``--searches``, the history's simulated model queries for a missing tool with the
    need's own search, and the stores learn those searches from the other fold only."""
    import session

    convs = [
        corpora.Conversation(f"c{n}", (corpora.Turn("Good morning!", ("email_send",)),))
        for n in range(4)
    ]
    searches = [{"turn": f"{c.id}_t0", "tool": "email_send"} for c in convs]
    session.SEARCHES.update({(c.id, 0, "email_send"): "pass the note on" for c in convs})
    try:
        settings = {**mcp_search.base_settings("openai"), "learn_keep_text": True}
        groups = mcp_search.stores(tmp_path, demo_registry(), convs, settings, searches, True)
        for url, rows in groups:
            mine = {row["turn"].split("_t")[0] for _, row in rows}
            taught = searched(url)
            assert {query for _, query in taught} == {"pass the note on"}  # not the request
            sessions = {sid.split("@")[0] for sid, _ in taught}
            assert sessions and not sessions & mine, (sessions, mine)
    finally:
        session.SEARCHES.clear()
