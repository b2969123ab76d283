"""The session bench's replay: corpora with turn gaps, recovery, restart-equality, prefix counts.

Real conversations, the real trinket, embedder and SQLite files: every gold tool is callable when
called (recall after recovery = 1) although the simulated model never names a tool it was not
shown, a brand-new Store + trinket per turn gives the same per-turn results as one long-lived
trinket, and ``tooltray eval recall`` reads the same recall back from the stored history.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import corpora  # noqa: E402
import session  # noqa: E402

from tooltray.tools.registry import ToolRegistry  # noqa: E402

DATA = session.DEFAULT_DATA
CORPUS = "bfcl_multiturn"
needs_data = pytest.mark.skipif(
    not (DATA / CORPUS / "queries.dev.jsonl").is_file(),
    reason=f"the bfcl_multiturn dev split is not at {DATA}",
)


@pytest.fixture(scope="module")
def corpus() -> tuple[ToolRegistry, list[corpora.Conversation]]:
    registry, names = corpora.load_registry(DATA, CORPUS)
    return registry, corpora.load_conversations(DATA, CORPUS, names)[:4]


@needs_data
@pytest.mark.parametrize("path", ["openai", "text"])
def test_replay_recovers_every_gold_tool_and_restart_gives_identical_turns(
    corpus: tuple[ToolRegistry, list[corpora.Conversation]], path: str, tmp_path: Path
) -> None:
    registry, convs = corpus
    settings = session.base_settings(path)
    url = f"sqlite:///{tmp_path / 'continuous.db'}"
    base = session.replay_continuous(registry, convs, url, settings)
    again = session.replay_restart(
        registry, convs, f"sqlite:///{tmp_path / 'restart.db'}", settings
    )
    assert len(base) == sum(len(c.turns) for c in convs)
    assert session.diff(base, again) == []
    m = session.metrics(base)
    assert m["recall_after_recovery_turn"] == 1.0
    assert all(set(r.gold) <= set(r.loaded_end) for r in base)
    assert sum(r.escapes for r in base) == len([k for r in base for k in r.escape_kinds])
    stored = session.history_recall(url)
    assert stored["recall"] == 1.0
    assert stored["first_pass_recall"] == pytest.approx(m["first_pass_recall_turn"], abs=1e-4)


def _gapped_corpus(root: Path) -> Path:
    """A two-tool corpus whose conversation skips turns 3 and 4, with a free-form id."""
    folder = root / "gapped"
    folder.mkdir()
    tools = [
        {"name": "get_weather", "description": "Weather forecast for a city.", "group": "w"},
        {"name": "book_taxi", "description": "Book a taxi to an address.", "group": "t"},
    ]
    history = ["Hi there", "What's the weather in Paris?", "Thanks", "Hmm", "Ok"]
    rows = [
        {"id": "chat-A_t0", "query": history[0], "gold": [], "turns": None},
        {"id": "chat-A_t1", "query": history[1], "gold": ["get_weather"], "turns": history[:1]},
        {"id": "chat-A_t2", "query": history[2], "gold": [], "turns": history[:2]},
        {"id": "chat-A_t5", "query": "Book me a taxi", "gold": ["book_taxi"], "turns": history},
        {"id": "free form", "query": "Yes please", "gold": ["book_taxi"], "turns": ["Taxi?"]},
    ]
    (folder / "tools.jsonl").write_text("\n".join(json.dumps(t) for t in tools) + "\n")
    (folder / "queries.dev.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return folder


def test_turn_gaps_build_messages_from_the_turns_field(tmp_path: Path) -> None:
    folder = _gapped_corpus(tmp_path)
    convs = corpora.load_conversations(tmp_path, folder.name)
    by_id = {c.id: c for c in convs}
    assert [t.number for t in by_id["chat-A"].turns] == [0, 1, 2, 5]
    msgs = corpora.messages_for(by_id["chat-A"].turns[3])
    assert [m["content"] for m in msgs if m["role"] == "user"][-2:] == ["Ok", "Book me a taxi"]
    assert len([m for m in msgs if m["role"] == "user"]) == 6
    other = next(c for c in convs if c.id != "chat-A")
    assert other.turns[0].number == 1


def test_gapped_corpus_replays_with_every_tool_recovered(tmp_path: Path) -> None:
    folder = _gapped_corpus(tmp_path)
    registry, names = corpora.load_registry(tmp_path, folder.name)
    convs = corpora.load_conversations(tmp_path, folder.name, names)
    url = f"sqlite:///{tmp_path / 'g.db'}"
    results = session.replay_continuous(registry, convs, url, session.base_settings("openai"))
    assert [r.turn for r in results if r.conv == "chat-A"] == [1, 2, 3, 6]  # 1-based
    assert session.metrics(results)["recall_after_recovery_turn"] == 1.0


def test_prefix_changes_count_consecutive_distinct_hashes() -> None:
    def turn(conv: str, h: str) -> session.TurnResult:
        return session.TurnResult(conv, 0, 1, [], [], [], 0, 1, 10, h, [], [], [h])

    rows = [turn("a", "x"), turn("a", "x"), turn("a", "y"), turn("a", "x"), turn("b", "z")]
    assert session.prefix_changes(rows) == [2, 0]
