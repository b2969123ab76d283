"""Trinket fixtures: the demo registry, a real store, the real embedder, fresh signals per test."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed
from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.store import Store
from tooltray.tools.demo import demo_registry
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec

MakeTrinket = Callable[..., ToolLoaderTrinket]


@pytest.fixture
def registry() -> ToolRegistry:
    return demo_registry()


@pytest.fixture
def make_trinket(registry: ToolRegistry, db_url: str) -> Iterator[MakeTrinket]:
    """Build trinkets over one database (SQLite file, then PostgreSQL); all closed at the end."""
    made: list[ToolLoaderTrinket] = []

    def make(
        url: str | None = None, reg: ToolRegistry | None = None, **settings: Any
    ) -> ToolLoaderTrinket:
        db = url or db_url
        trinket = ToolLoaderTrinket(
            reg or registry, Store(db), settings=Settings(db=db, **settings)
        )
        made.append(trinket)
        return trinket

    yield make
    for trinket in made:  # the stores were passed in: the trinket leaves them open
        trinket.close()
        trinket.store.close()


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def finish_turn(session_id: str, turn: int, used: list[str] = ()) -> None:  # type: ignore[assignment]
    """What an agent emits after a turn: tool-used per real tool, then turn-completed."""
    for name in used:
        emit(tool_used, session_id, ToolUsed(tool=name, turn=turn))
    emit(turn_completed, session_id, TurnCompleted(turn=turn))


def write_catalog(path: Path, specs: Iterable[ToolSpec]) -> Path:
    """``specs`` as a tools.jsonl file (``group`` = bundle): what ``explain --catalog`` reads."""
    rows = [
        {
            "name": s.name,
            "description": s.description,
            "parameters": s.parameters,
            "group": s.bundle,
        }
        for s in specs
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
