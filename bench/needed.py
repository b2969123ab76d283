"""Suite ``needed``: how often a boundary pick is needed, by its fused z and its share of the top.

``python bench/run.py needed [--data DIR] [--quick]``. For every dev conversation of apibank,
bfcl_multiturn and bfcl_small (each conversation over its own catalog there), the default
selector scores the first turn as a session boundary does (``Selector.boundary``, no history), and
each pick is checked against the conversation's gold: used on the first turn, or later. The
chance the priced opening weighs (``memory/tuning.py``: ``NEEDED_BY_Z``, ``NEEDED_BY_SHARE``) is
the first-turn use plus ``GROWTH_MISS`` of the later use: a later need is mostly revealed by
growth, and only the share growth misses costs an escape.

A third table reads what a session needs on its first turn, per corpus (also metatool, toolbench
and sealtools, which the priced boundary was never tuned on; 200 conversations at most each):
the first turn's gold tools beside the message's task count (``IndexSelector.tasks``, what the
boundary's needs count) and the boundary picks' summed chances.
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
from tooltray.memory.core.catalog import AllowedCatalog  # noqa: E402
from tooltray.memory.retrieval.selector import NoSignals, SessionSignals  # noqa: E402
from tooltray.memory.store import Store  # noqa: E402
from tooltray.memory.tuning import GROWTH_MISS, needed  # noqa: E402

CORPORA = ("apibank", "bfcl_multiturn", "bfcl_small")
TASK_CORPORA = (*CORPORA, "metatool", "toolbench", "sealtools")
QUICK_CONVERSATIONS = 15
MOST_CONVERSATIONS = 200
Counts = dict[float, list[int]]


def _buckets() -> Counts:
    return defaultdict(lambda: [0, 0, 0])


def _count(row: list[int], name: str, gold: set[str], first: set[str]) -> None:
    row[0] += 1
    row[1] += name in gold
    row[2] += name in first


def _conversation(
    planner: AllowedCatalog, conv: Conversation, by_z: Counts, by_share: Counts
) -> None:
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


def _first_turn(planner: AllowedCatalog, conv: Conversation) -> tuple[int, int, float]:
    """One conversation's first-turn gold tools, its message's task count and its boundary
    picks' summed chances (each pick's ``needed`` by its z and share of the top)."""
    turn, selector = conv.turns[0], planner.selector()
    users = [*turn.earlier, turn.query]
    picks = selector.boundary(users, SessionSignals(NoSignals(), conv.id))
    top = max((c.score or 0.0 for c in picks), default=0.0)
    chances = sum(needed(c.score or 0.0, top) for c in picks)
    tasks = selector.tasks(users)
    return len(set(turn.gold)), tasks, chances


def _task_row(corpus: str, rows: list[tuple[int, int, float]]) -> dict[str, Any]:
    n = len(rows)
    means = [round(sum(r[i] for r in rows) / n, 2) for i in range(3)]
    keys = ("corpus", "first_turn_tools", "tasks", "chances")
    return dict(zip(keys, [corpus, *means], strict=True))


def _rows(counts: Counts) -> list[dict[str, Any]]:
    out = []
    for floor in sorted(counts):
        n, used, first = counts[floor]
        chance = (first + GROWTH_MISS * (used - first)) / n
        out.append({"from": floor, "picks": n, "used": used / n, "first_turn": first / n})
        out[-1]["chance"] = round(chance, 3)
    return out


def _sample(convs: list[Conversation], quick: bool) -> list[Conversation]:
    """The first 15 if quick, else every n-th of at most :data:`MOST_CONVERSATIONS`."""
    if quick:
        return convs[:QUICK_CONVERSATIONS]
    return convs[:: max(1, len(convs) // MOST_CONVERSATIONS)][:MOST_CONVERSATIONS]


def _corpus(
    data: Path, corpus: str, store: Store, quick: bool, buckets: list[Counts] | None
) -> dict[str, Any]:
    """One corpus's first-turn row; its picks go into ``buckets`` (by z, by share) if given."""
    registry, names = load_registry(data, corpus)
    convs = _sample(load_conversations(data, corpus, names), quick)
    regs, planners, rows = registries(corpus, registry, convs), {}, []
    for conv in convs:
        reg = regs[conv.id]
        planner = planners.setdefault(id(reg), AllowedCatalog(reg, Settings(), store))
        rows.append(_first_turn(planner, conv))
        if buckets is not None:
            _conversation(planner, conv, *buckets)
    return _task_row(corpus, rows)


def measure(data: Path, corpora: Iterable[str], quick: bool) -> dict[str, Any]:
    """Both bucket tables over ``corpora``'s dev conversations, and the first-turn table over
    those of :data:`TASK_CORPORA` found under ``data`` too."""
    buckets, wanted = [_buckets(), _buckets()], set(corpora)
    store = Store(f"sqlite:///{tempfile.mkdtemp()}/needed.db")
    found = [c for c in TASK_CORPORA if c in wanted or (data / c).is_dir()]
    tasks = [_corpus(data, c, store, quick, buckets if c in wanted else None) for c in found]
    store.close()
    return {"by_z": _rows(buckets[0]), "by_share": _rows(buckets[1]), "first_turn": tasks}


def _table(title: str, rows: list[dict[str, Any]]) -> Table:
    table = Table(title=title)
    for col in rows[0] if rows else ():
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
    console.print(
        _table("a first turn's tools, its task count, its picks' chances", result["first_turn"])
    )
    return result
