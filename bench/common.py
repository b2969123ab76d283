"""Shared bench helpers: corpus folders, gold names, the embedding cache, recall metrics.

A corpus folder holds ``tools.jsonl`` and ``queries.dev.jsonl`` in the ../shared/data format
(see that folder's README); ``--data`` may be such a folder or a folder of them.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooltray.tools.importers.catalog import read_catalog
from tooltray.tools.spec import ToolSpec

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
KS = (1, 5, 10)
COMPLETE_KS = (5, 10)
METRICS = ("R@1", "R@5", "R@10", "C@5", "C@10", "tokens")


@dataclass
class Corpus:
    """One corpus: its tools (names sanitised like tooltray does) and labelled queries."""

    name: str
    tools: list[ToolSpec]
    queries: list[dict[str, Any]]
    path: Path = field(default=Path("."))


def corpora(data: Path) -> list[Path]:
    """The corpus folders under ``data`` (or ``data`` itself when it holds a tools.jsonl)."""
    if (data / "tools.jsonl").is_file():
        return [data]
    return sorted(p for p in data.iterdir() if (p / "tools.jsonl").is_file())


def load_corpus(folder: Path, limit: int | None = None) -> Corpus:
    """Read a corpus; gold names are mapped onto the sanitised tool names."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        catalog = read_catalog(folder / "tools.jsonl", sanitize=True)
    original = {orig: clean for clean, orig in catalog.renamed.items()}
    lines = (folder / "queries.dev.jsonl").read_text(encoding="utf-8").splitlines()
    queries = [json.loads(line) for line in lines if line.strip()][:limit]
    for q in queries:
        q["gold"] = [original.get(g, g) for g in q["gold"]]
    return Corpus(folder.name, catalog.tools, queries, folder)


def messages(query: dict[str, Any]) -> list[str]:
    """The user messages of a query row: earlier turns, then the query."""
    return [*(query.get("turns") or []), query["query"]]


class Scores:
    """Accumulates R@k (share of gold in the top k) and C@k (all gold in the top k)."""

    def __init__(self) -> None:
        self.sums = dict.fromkeys(METRICS, 0.0)
        self.n = 0

    def add(self, ranked: Sequence[str], gold: Sequence[str], tokens: float = 0.0) -> None:
        """Score one query's ranking."""
        self.n += 1
        for k in KS:
            self.sums[f"R@{k}"] += sum(g in ranked[:k] for g in gold) / max(len(gold), 1)
        for k in COMPLETE_KS:
            self.sums[f"C@{k}"] += float(all(g in ranked[:k] for g in gold))
        self.sums["tokens"] += tokens

    def result(self) -> dict[str, float]:
        """Percentages (tokens: mean per query), one decimal."""
        n = max(self.n, 1)
        return {
            k: round(v / n, 1) if k == "tokens" else round(100 * v / n, 1)
            for k, v in self.sums.items()
        }
