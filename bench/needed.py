"""Suite ``needed``: how often a boundary pick is needed, by its fused z and its share of the top.

``python bench/run.py needed [--data DIR] [--quick]``. For every dev conversation of apibank,
bfcl_multiturn and bfcl_small (each conversation over its own catalog there), the default
selector scores the first turn as a session boundary does (``Selector.boundary``, no history), and
each pick is checked against the conversation's gold: used on the first turn, or later. The
chance the priced opening weighs (``memory/tuning.py``: ``NEEDED_BY_Z``, ``NEEDED_BY_SHARE``) is
the first-turn use plus ``GROWTH_MISS`` of the later use: a later need is mostly revealed by
growth, and only the share growth misses costs an escape.
"""

from __future__ import annotations

import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import Conversation, load_conversations, load_registry, registries  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from tooltray.memory.config import Settings  # noqa: E402
from tooltray.memory.core.planner import Planner  # noqa: E402
from tooltray.memory.retrieval.selector import NoSignals, SessionSignals  # noqa: E402
from tooltray.memory.store import Store  # noqa: E402
from tooltray.memory.tuning import GROWTH_MISS  # noqa: E402

CORPORA = ("apibank", "bfcl_multiturn", "bfcl_small")
QUICK_CONVERSATIONS = 15
Counts = dict[float, list[int]]


def _buckets() -> Counts:
    return defaultdict(lambda: [0, 0, 0])


def _count(row: list[int], name: str, gold: set[str], first: set[str]) -> None:
    row[0] += 1
    row[1] += name in gold
    row[2] += name in first


def _conversation(planner: Planner, conv: Conversation, by_z: Counts, by_share: Counts) -> None:
    """Count one conversation's boundary picks into both bucket tables."""
    turn = conv.turns[0]
    picks = planner.selector().boundary(
        [*turn.earlier, turn.query], SessionSignals(NoSignals(), conv.id)
    )
    gold = {g for t in conv.turns for g in t.gold}
    top = max((c.score or 0.0 for c in picks), default=0.0) or 1.0
    for pick in picks:
        z = pick.score or 0.0
        _count(by_z[min(int(z * 2), 12) / 2], pick.name, gold, set(turn.gold))
        _count(by_share[min(int(z / top * 20), 20) / 20], pick.name, gold, set(turn.gold))


def _rows(counts: Counts) -> list[dict[str, Any]]:
    out = []
    for floor in sorted(counts):
        n, used, first = counts[floor]
        chance = (first + GROWTH_MISS * (used - first)) / n
        out.append({"from": floor, "picks": n, "used": used / n, "first_turn": first / n})
        out[-1]["chance"] = round(chance, 3)
    return out


def measure(data: Path, corpora: Iterable[str], quick: bool) -> dict[str, Any]:
    """Both bucket tables over ``corpora``'s dev conversations (the first 15 each if quick)."""
    by_z, by_share = _buckets(), _buckets()
    store = Store(f"sqlite:///{tempfile.mkdtemp()}/needed.db")
    for corpus in corpora:
        registry, names = load_registry(data, corpus)
        convs = load_conversations(data, corpus, names)[: QUICK_CONVERSATIONS if quick else None]
        planners: dict[int, Planner] = {}
        for conv in convs:
            reg = registries(corpus, registry, convs)[conv.id]
            planner = planners.setdefault(id(reg), Planner(reg, Settings(), store))
            _conversation(planner, conv, by_z, by_share)
    store.close()
    return {"by_z": _rows(by_z), "by_share": _rows(by_share)}


def _table(title: str, rows: list[dict[str, Any]]) -> Table:
    table = Table(title=title)
    for col in ("from", "picks", "used", "first_turn", "chance"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(*(f"{r[c]:.3f}" if isinstance(r[c], float) else str(r[c]) for c in r))
    return table


def run(data_dir: Path, out_dir: Path, *, quick: bool = False) -> dict[str, Any]:
    """Measure, print both tables and return them (the dispatcher writes needed.json)."""
    result = measure(data_dir, CORPORA, quick)
    console = Console(width=120)
    console.print(_table("chance a boundary pick is needed, by fused z", result["by_z"]))
    console.print(_table("... by its share of the top score", result["by_share"]))
    return result
