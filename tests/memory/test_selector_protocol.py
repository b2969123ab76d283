"""A selector of one's own, passed in: selection's stages 1-3 are replaceable.

The selector here answers from a keyword table (no embedder); the trinket, the planner's caps,
the store and the prompt are the real ones.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from tooltray.memory import Settings, ToolLoaderTrinket
from tooltray.memory.core.catalog import AllowedCatalog
from tooltray.memory.retrieval.scoring import Candidate
from tooltray.memory.retrieval.selector import SelectionSignals, SelectorBase
from tooltray.tools.demo import demo_registry

TABLE = {"weather": ["weather_current", "weather_forecast"], "hotel": ["travel_search_hotels"]}


class KeywordSelector(SelectorBase):
    """Loads the tools of every keyword a message holds; nothing else."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def _match(self, text: str, exclude: Collection[str] = ()) -> list[Candidate]:
        names = [n for word, tools in TABLE.items() if word in text.lower() for n in tools]
        return [Candidate(n, "semantic", 1.0) for n in names if n not in exclude]

    def boundary(self, users: Sequence[str], signals: SelectionSignals) -> list[Candidate]:
        self.asked.append("boundary")
        return self._match(users[-1])

    def growth(
        self, users: Sequence[str], signals: SelectionSignals, loaded: Sequence[str], fresh: int = 1
    ) -> list[Candidate]:
        self.asked.append("growth")
        return self._match(users[-1], loaded)

    def search(self, query: str, exclude: Collection[str] = ()) -> list[Candidate]:
        self.asked.append("search")
        return self._match(query, exclude)


def test_a_selector_passed_in_decides_what_loads(tmp_path: Path) -> None:
    registry, mine = demo_registry(), KeywordSelector()
    settings = Settings(db=f"sqlite:///{tmp_path / 't.db'}", activation_share=0.0, learn="off")

    def build(specs: Any, settings: Settings, store: Any, progress: Any) -> KeywordSelector:
        return mine

    trinket = ToolLoaderTrinket(registry, settings=settings, catalog=None)
    trinket.catalog = AllowedCatalog(registry, settings, trinket.store, selector=build)
    view = trinket.prepare("s", [{"role": "user", "content": "Weather in Oslo?"}])
    assert {"weather_current", "weather_forecast"} <= set(view.loaded)
    assert "travel_search_hotels" not in view.loaded
    answer = trinket.handle_meta("s", "load_tools", json.dumps({"query": "a hotel in Oslo"}))
    assert "travel_search_hotels" in answer
    assert mine.asked[:2] == ["boundary", "search"]
