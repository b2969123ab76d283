"""The session bench's replay on real bfcl_multiturn conversations: recovery and restart-equality.

Five conversations, both render paths, the real trinket, embedder and SQLite files: every gold tool
is callable when called (recall after recovery = 1), a brand-new Store + trinket per turn gives the
same per-turn results as one long-lived trinket, and ``tooltray eval recall`` reads the same recall
back from the stored history.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import session  # noqa: E402

from tooltray.tools.registry import ToolRegistry  # noqa: E402

DATA = session.DEFAULT_DATA
needs_data = pytest.mark.skipif(
    not (DATA / session.CORPUS / "queries.dev.jsonl").is_file(),
    reason=f"the bfcl_multiturn dev split is not at {DATA}",
)


@pytest.fixture(scope="module")
def corpus() -> tuple[ToolRegistry, list[session.Conversation]]:
    registry, names = session.bfcl_registry(DATA)
    return registry, session.load_conversations(DATA, names)[:5]


@needs_data
@pytest.mark.parametrize("path", ["openai", "text"])
def test_replay_recovers_every_gold_tool_and_restart_gives_identical_turns(
    corpus: tuple[ToolRegistry, list[session.Conversation]], path: str, tmp_path: Path
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
    assert m["recall_after_recovery_tool"] == 1.0
    assert all(set(r.gold) <= set(r.loaded_end) for r in base)
    escapes = sum(r.escapes for r in base)
    assert escapes == sum(len(r.missing_first) for r in base)
    stored = session.history_recall(url)
    assert stored["recall"] == 1.0
    assert stored["escapes"] == escapes
    assert stored["first_pass_recall"] == pytest.approx(m["first_pass_recall_turn"], abs=1e-4)


@needs_data
def test_conversations_are_contiguous_and_messages_alternate() -> None:
    convs = session.load_conversations(DATA)
    assert len(convs) == 121
    assert sum(len(c.turns) for c in convs) == 440
    msgs = session.messages_for(convs[0], 2)
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    assert msgs[-1]["content"] == convs[0].turns[2][0]


def test_prefix_changes_count_consecutive_distinct_hashes() -> None:
    def turn(conv: str, h: str) -> session.TurnResult:
        return session.TurnResult(conv, 0, 1, [], [], [], 0, 1, 10, h, [], [], [h])

    rows = [turn("a", "x"), turn("a", "x"), turn("a", "y"), turn("a", "x"), turn("b", "z")]
    assert session.prefix_changes(rows) == [2, 0]
