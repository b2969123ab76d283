"""One public call is one store transaction: computed first, applied in one write.

The count comes from SQLAlchemy's ``commit`` event on a real SQLite file, so any write path the
trinket takes (turn advance, selection, growth, turn record, learning) counts. The catalog's
document vectors are cached once per catalog (not per call) when the index is first built; the
fixture builds it before counting.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed
from tooltray.events import payloads as p
from tooltray.events import signals as sig
from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.embedders.base import clear_memo
from tooltray.memory.store import Store
from tooltray.tools.demo import demo_registry


class Commits:
    """Counts the commits an engine makes between two reads."""

    def __init__(self, store: Store) -> None:
        self.count = 0
        event.listen(store.engine, "commit", self._on_commit)

    def _on_commit(self, conn: Any) -> None:
        self.count += 1

    def take(self) -> int:
        seen, self.count = self.count, 0
        return seen


@pytest.fixture
def counted(tmp_path: Path) -> Iterator[tuple[ToolLoaderTrinket, Commits]]:
    url = f"sqlite:///{tmp_path / 'tooltray.db'}"
    store = Store(url)
    settings = Settings(db=url, context_window=8192, growth="every_turn")
    with ToolLoaderTrinket(demo_registry(), store, settings=settings) as trinket:
        trinket.catalog.selector()  # the catalog's vectors are cached before counting
        yield trinket, Commits(store)


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def test_each_public_call_commits_at_most_once(
    counted: tuple[ToolLoaderTrinket, Commits],
) -> None:
    trinket, commits = counted
    messages = [user("What is the weather in Oslo tomorrow?")]
    trinket.prepare("s", messages)
    assert commits.take() == 1, "a session's first prepare"
    trinket.prepare("s", messages)
    assert commits.take() <= 1, "a mid-turn prepare"
    emit(tool_used, "s", ToolUsed(tool="weather_forecast"))
    assert commits.take() == 1, "tool-used is stored when received"
    emit(turn_completed, "s", TurnCompleted())
    assert commits.take() == 1, "turn-completed"
    messages += [{"role": "assistant", "content": "Sunny."}, user("Send an email to Ann about it")]
    before = set(trinket.loaded("s"))
    trinket.prepare("s", messages)
    assert set(trinket.loaded("s")) > before, "the later turn grew"
    assert commits.take() == 1, "a later turn with growth"
    trinket.handle_meta("s", "load_tools", {"query": "convert a currency amount"})
    assert commits.take() == 1, "a load_tools query"


def test_a_first_prepare_that_embeds_the_catalog_commits_once(tmp_path: Path) -> None:
    """The catalog's vectors, embedded by the first ``prepare``, go in the call's one commit."""
    url = f"sqlite:///{tmp_path / 'tooltray.db'}"
    store = Store(url)
    clear_memo()  # nothing embedded yet, in this process or in the store
    with ToolLoaderTrinket(demo_registry(), store, settings=Settings(db=url)) as trinket:
        commits = Commits(store)
        trinket.prepare("s", [user("What is the weather in Oslo tomorrow?")])
        assert commits.take() == 1, "a first prepare on a never-embedded catalog"
    with store.engine.connect() as conn:
        stored = conn.exec_driver_sql("SELECT count(*) FROM embeddings").scalar()
    assert stored, "the vectors were stored with it"


def test_signals_fire_after_the_commit(counted: tuple[ToolLoaderTrinket, Commits]) -> None:
    """A ``tools-unloaded`` receiver reads the store and no longer finds the tools."""
    trinket, _ = counted
    trinket.prepare("f", [user("What is the weather in Oslo tomorrow?")])
    trinket.handle_meta("f", "fallback", {})
    seen: list[tuple[list[str], set[str]]] = []

    def receiver(sender: Any, payload: p.ToolsUnloaded, **_: Any) -> None:
        stored = trinket.store.snapshot(str(sender))
        assert stored is not None
        seen.append((payload.tools, set(stored.names())))

    with sig.tools_unloaded.connected_to(receiver, sender="f"):
        emit(turn_completed, "f", TurnCompleted(turn=1))
    assert seen, "the fallback's unused tools were unloaded"
    gone, stored = seen[0]
    assert gone and not set(gone) & stored
