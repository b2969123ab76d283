"""Suite ``latency_turn``: what tooltray adds to every turn, and how fast the store takes changes.

``python bench/run.py latency_turn [--data DIR] [--out DIR] [--quick]`` (or standalone).

* Turn overhead = ``prepare`` + a ``tool-used`` signal per tool the model calls +
  ``turn-completed``, timed per turn over many sessions with the real embedder and a SQLite
  file (native ``openai`` path, default settings). Catalogs: the demo (128 tools, the demo
  script's turns and gold calls) and 1,000 synthetic tools (bench/cost.py's Seal-Tools
  derivation; Seal-Tools dev queries, three per session; the model "uses" the first two loaded
  non-meta tools). The first session warms the catalog (embedding, index) and is not counted.
  Reports p50/p99 of the whole turn and of ``prepare`` alone (selection on turn 1, growth
  checks later).
* The priced decision (a timing subclass of the planner): a boundary's opening and every-tool
  choice, and a later turn's priced reveals, p50 per turn.
* Store throughput: sequential ``Store.apply`` of one turn's typical changes (two uses, the turn
  counter, a turn record) on a SQLite file: applies per second and p50/p99.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed
from tooltray.memory.config import Settings
from tooltray.memory.core.catalog import AllowedCatalog
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.metatools.meta_tools import META_TOOL_NAMES
from tooltray.memory.store import Store
from tooltray.memory.store.records import Changes, TurnRecord, Use
from tooltray.tools.demo import demo_registry, demo_script
from tooltray.tools.registry import ToolRegistry

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))
from cost import registry_of, synthetic_tools  # noqa: E402

Session = list[tuple[str, list[str]]]  # (user message, tools the model uses; [] = pick loaded)


class TimedPlanner(AllowedCatalog):
    """The shipped planner, timing its priced decision: the boundary's opening and every-tool
    choice, and a later turn's priced reveals (over the picks of the conversation it scored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.spent = 0.0

    def _timed(self, fn: Any, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self.spent += (time.perf_counter() - start) * 1000

    def _opening(self, picks: Any) -> Any:
        return self._timed(super()._opening, picks)

    def _everything(self, opening: Any, needs: float) -> bool:
        return bool(self._timed(super()._everything, opening, needs))

    def _worth_revealing(self, picks: Any, taken: Any) -> Any:
        return self._timed(super()._worth_revealing, picks, taken)


def demo_sessions(n: int) -> list[Session]:
    """``n`` copies of the demo script (user message, gold calls without meta-tools)."""
    turns = [
        (str(t["user"]), [c["name"] for c in t["calls"] if c["name"] not in META_TOOL_NAMES])
        for t in demo_script()
    ]
    return [turns for _ in range(n)]


def sealtools_sessions(data: Path, n: int, per: int = 3) -> list[Session]:
    """``n`` sessions of ``per`` consecutive Seal-Tools dev queries."""
    text = (data / "sealtools" / "queries.dev.jsonl").read_text("utf-8")
    queries = [json.loads(x)["query"] for x in text.splitlines() if x.strip()]
    return [[(queries[(i * per + k) % len(queries)], []) for k in range(per)] for i in range(n)]


def _turn(
    trinket: ToolLoaderTrinket, sid: str, messages: list[dict[str, str]], used: list[str]
) -> tuple[float, float]:
    start = time.perf_counter()
    view = trinket.prepare(sid, messages)
    prepared = time.perf_counter()
    tools = used or [n for n in view.loaded if n not in META_TOOL_NAMES][:2]
    for tool in tools:
        emit(tool_used, sid, ToolUsed(tool=tool, turn=view.turn))
    emit(turn_completed, sid, TurnCompleted(turn=view.turn))
    end = time.perf_counter()
    return (end - start) * 1000, (prepared - start) * 1000


def turn_overhead(
    registry: ToolRegistry, sessions: Sequence[Session], cache: Store, db: Path
) -> dict[str, Any]:
    """Per-turn milliseconds over ``sessions`` (the first one is warm-up)."""
    url = f"sqlite:///{db}"
    settings = Settings(db=url, path="openai")
    store = Store(url)
    planner = TimedPlanner(registry, settings, cache)
    trinket = ToolLoaderTrinket(registry, store, settings=settings, catalog=planner)
    totals: list[float] = []
    prepares: list[float] = []
    decisions: dict[str, list[float]] = {"boundary": [], "later": []}
    run = uuid.uuid4().hex[:8]
    try:
        for i, session in enumerate(sessions):
            messages: list[dict[str, str]] = []
            for k, (user, used) in enumerate(session):
                messages = [*messages, {"role": "user", "content": user}]
                planner.spent = 0.0
                total, prep = _turn(trinket, f"lat-{run}-{i}", messages, used)
                messages.append({"role": "assistant", "content": "(done)"})
                if i > 0:
                    totals.append(total)
                    prepares.append(prep)
                    decisions["later" if k else "boundary"].append(planner.spent)
    finally:
        trinket.close()
        store.close()
    return {
        "tools": len(registry.allowed()),
        "turns": len(totals),
        **_stats(totals, "turn"),
        **_stats(prepares, "prepare"),
        **_stats(decisions["boundary"], "decision_boundary"),
        **_stats(decisions["later"], "decision_later"),
    }


def _stats(ms: Sequence[float], key: str) -> dict[str, float]:
    arr = np.asarray(ms)
    return {
        f"{key}_p50_ms": round(float(np.percentile(arr, 50)), 2),
        f"{key}_p99_ms": round(float(np.percentile(arr, 99)), 2),
        f"{key}_mean_ms": round(float(arr.mean()), 2),
    }


def store_throughput(db: Path, n: int) -> dict[str, Any]:
    """Sequential applies of one turn's typical changes."""
    times: list[float] = []
    with Store(f"sqlite:///{db}") as store:
        sid = "throughput"
        for turn in range(1, n + 1):
            record = TurnRecord(sid, turn, f"{turn:064x}", 2000, 18, 15000)
            changes = Changes(turn=turn, uses=[Use("a", turn), Use("b", turn)], turn_record=record)
            start = time.perf_counter()
            store.apply(sid, changes)
            times.append((time.perf_counter() - start) * 1000)
    return {
        "applies": n,
        "applies_per_s": round(n / (sum(times) / 1000), 1),
        **_stats(times, "apply"),
    }


def table(result: dict[str, Any]) -> Table:
    """Turn overhead per catalog, then store throughput."""
    out = Table(title="turn overhead (prepare + tool-used + turn-completed), openai path, SQLite")
    cols = ["catalog", "tools", "turns", "turn p50", "turn p99", "prepare p50", "prepare p99"]
    for c in [*cols, "priced decision p50 (boundary / later)"]:
        out.add_column(c, justify="left" if c == "catalog" else "right")
    for name, m in result["turn_overhead"].items():
        out.add_row(
            name,
            str(m["tools"]),
            str(m["turns"]),
            f"{m['turn_p50_ms']} ms",
            f"{m['turn_p99_ms']} ms",
            f"{m['prepare_p50_ms']} ms",
            f"{m['prepare_p99_ms']} ms",
            f"{m['decision_boundary_p50_ms']} / {m['decision_later_p50_ms']} ms",
        )
    s = result["store"]
    out.caption = (
        f"store: {s['applies_per_s']} applies/s (p50 {s['apply_p50_ms']} ms, "
        f"p99 {s['apply_p99_ms']} ms) over {s['applies']} sequential turn applies"
    )
    return out


def run(data_dir: Path, out_dir: Path, *, quick: bool = False) -> dict[str, Any]:
    """The suite: both catalogs, then the store."""
    cache = Store(f"sqlite:///{out_dir / 'embeddings.db'}", auto_upgrade=True)
    n = 6 if quick else 31
    with tempfile.TemporaryDirectory(prefix="tooltray-latency-") as tmp:
        folder = Path(tmp)
        demo = turn_overhead(demo_registry(), demo_sessions(n), cache, folder / "demo.db")
        syn = registry_of(*synthetic_tools(data_dir, 1000))
        synth = turn_overhead(syn, sealtools_sessions(data_dir, 3 * n), cache, folder / "syn.db")
        store = store_throughput(folder / "store.db", 200 if quick else 2000)
    result = {
        "turn_overhead": {"demo": demo, "synthetic_1000": synth},
        "store": store,
        "settings": {"path": "openai", "defaults": True},
    }
    Console(width=200).print(table(result))
    return result


if __name__ == "__main__":  # the same flags and JSON as ``python bench/run.py latency_turn``
    from run import main

    raise SystemExit(main(["latency_turn", *sys.argv[1:]]))
