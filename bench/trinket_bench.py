"""Suite ``trinket``: the trinket's own costs on a SQLite file.

turn-completed handling p50 (target <= 2 ms), what learning adds to it (a turn that used two tools,
``learn = "on"`` minus ``"off"``, over a store already holding 10,000 learned turns: target
<= 1 ms), tool-used events persisted per second through the
signal (target >= 5,000: one signal per event, stored at the turn's end, counted back from the
history table), and resume time of a session with 200 loaded tools and 10,000 history rows in a new
trinket (target <= 20 ms; the catalog index is built once per process and cached, so resume is
the store read plus the rehydration).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from learned import fill
from rich.console import Console
from rich.table import Table

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed
from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.store import Changes, HistoryEvent, Load, Store
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec

TARGETS = {
    "turn_completed_p50_ms": 2.0,
    "learning_adds_p50_ms": 1.0,
    "tool_used_per_s": 5000.0,
    "resume_ms": 20.0,
}


def registry(n: int = 300) -> ToolRegistry:
    """A synthetic catalog of ``n`` tools in bundles of 10."""
    specs = [
        ToolSpec(
            name=f"tool_{i}", description=f"Does task {i} of group {i // 10}.", bundle=f"b{i // 10}"
        )
        for i in range(n)
    ]
    return ToolRegistry(specs)


def _trinket(url: str, reg: ToolRegistry, learn: str = "on") -> ToolLoaderTrinket:
    settings = Settings(db=url, growth="never", learn=learn)
    return ToolLoaderTrinket(reg, Store(url), settings=settings)


def learning_turn_ms(url: str, reg: ToolRegistry, turns: int, learn: str) -> list[float]:
    """turn-completed of turns that used two tools each (their tool-used signals not timed)."""
    trinket = _trinket(url, reg, learn)
    sid = f"learn-{learn}"
    trinket.prepare(sid, [{"role": "user", "content": "do task 3 then task 4"}])
    names = [s.name for s in reg.allowed()]
    out = []
    for turn in range(1, turns + 1):
        for name in (names[turn % 50], names[(turn + 1) % 50]):
            emit(tool_used, sid, ToolUsed(tool=name, turn=turn))
        trinket.flush(sid)  # the uses' own write is not learning's cost
        start = time.perf_counter()
        emit(turn_completed, sid, TurnCompleted(turn=turn))
        out.append((time.perf_counter() - start) * 1000)
    trinket.close()
    return out


def turn_completed_ms(url: str, reg: ToolRegistry, turns: int) -> list[float]:
    trinket = _trinket(url, reg)
    trinket.prepare("t", [{"role": "user", "content": "do task 3"}])
    out = []
    for turn in range(1, turns + 1):
        start = time.perf_counter()
        emit(turn_completed, "t", TurnCompleted(turn=turn))
        out.append((time.perf_counter() - start) * 1000)
    trinket.close()
    return out


def tool_used_rate(url: str, reg: ToolRegistry, events: int) -> float:
    trinket = _trinket(url, reg)
    trinket.prepare("u", [{"role": "user", "content": "do task 3"}])
    loaded = trinket.loaded("u")
    start = time.perf_counter()
    for i in range(events):
        emit(tool_used, "u", ToolUsed(tool=loaded[i % len(loaded)], turn=1))
    emit(turn_completed, "u", TurnCompleted(turn=1))
    rate = events / (time.perf_counter() - start)
    stored = sum(e.kind == "used" for e in trinket.store.history("u"))  # type: ignore[union-attr]
    assert stored == events, f"{stored} of {events} tool-used events stored"
    trinket.close()
    return rate


def resume_ms(url: str, reg: ToolRegistry, repeats: int) -> list[float]:
    store = Store(url)
    loads = [Load(s.name, "semantic", 1, 0.5) for s in reg.allowed()[:200]]
    store.apply("r", Changes(turn=1, loads=loads))
    for chunk in range(20):
        events = [HistoryEvent("r", 1 + chunk, "used", tool=f"tool_{i % 200}") for i in range(500)]
        store.apply("r", Changes(turn=1 + chunk, events=events))
    warm = _trinket(url, reg)
    warm.catalog.prepared()
    out = []
    for _ in range(repeats):
        trinket = ToolLoaderTrinket(reg, store, settings=warm.settings, catalog=warm.catalog)
        start = time.perf_counter()
        trinket.loaded("r")
        out.append((time.perf_counter() - start) * 1000)
        trinket.close()
    return out


def run(data_dir: Path, out_dir: Path, *, quick: bool = False) -> dict[str, Any]:
    """Measure on a temporary SQLite file and print the table."""
    reg = registry()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        tc = turn_completed_ms(url, reg, 100 if quick else 500)
        store = Store(url)
        fill(store, [s.name for s in reg.allowed()], np.eye(8, 384, dtype=np.float32))
        store.close()
        n = 100 if quick else 400
        off, on = learning_turn_ms(url, reg, n, "off"), learning_turn_ms(url, reg, n, "on")
        rate = tool_used_rate(url, reg, 1000 if quick else 5000)
        res = resume_ms(url, reg, 10 if quick else 30)
    results = {
        "turn_completed_p50_ms": round(statistics.median(tc), 3),
        "turn_completed_p99_ms": round(sorted(tc)[int(0.99 * (len(tc) - 1))], 3),
        "learning_off_turn_p50_ms": round(statistics.median(off), 3),
        "learning_on_turn_p50_ms": round(statistics.median(on), 3),
        "learning_adds_p50_ms": round(statistics.median(on) - statistics.median(off), 3),
        "tool_used_per_s": round(rate),
        "resume_ms": round(statistics.median(res), 3),
    }
    table = Table(title="trinket on SQLite")
    for col in ("metric", "value", "target"):
        table.add_column(col)
    for key, value in results.items():
        target = TARGETS.get(key)
        table.add_row(
            key,
            str(value),
            "" if target is None else f"{'>=' if 'per_s' in key else '<='} {target:g}",
        )
    Console().print(table)
    return {"results": results, "targets": TARGETS}
