"""Learned history for the latency and trinket suites: a store holding 10,000 past turns.

The rows are written in bulk (as if 10,000 turns had ended), in the shape the trinket writes
them: each past turn used 1-3 tools of the catalog, its vector is a real query vector plus noise,
and every co-use pair it taught is in ``learn_pairs``. Reading them back is what is timed.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sqlalchemy import insert

from tooltray.memory.embedders import normalise
from tooltray.memory.learning import StoreSignals
from tooltray.memory.store import Store
from tooltray.memory.store.tables import PAIRS, REQUESTS, pairs

PAST_TURNS = 10_000


def fill(store: Store, names: Sequence[str], queries: Any, turns: int = PAST_TURNS) -> None:
    """Write ``turns`` learned turns over ``names``; vectors are ``queries`` rows plus noise."""
    rng, np_rng = random.Random(13), np.random.default_rng(13)
    base = np.asarray(queries, np.float32)
    picks = base[np_rng.integers(0, len(base), turns)]
    vectors = normalise(picks + 0.3 * np_rng.standard_normal(picks.shape).astype(np.float32))
    requests, weights, previous = [], {}, []  # type: ignore[var-annotated]
    for i in range(turns):
        tools = sorted(rng.sample(list(names), rng.randint(1, 3)))
        requests.append(
            {"session_id": f"past-{i // 8}", "turn": i % 8, "tools": tools, "embedder_id": "b"}
            | {"dim": vectors.shape[1], "vector": vectors[i].tobytes(), "text": None}
        )
        for pair in pairs(tools, previous if i % 8 else []):
            weights[pair] = weights.get(pair, 0.0) + 1.0
        previous = tools
    with store.engine.begin() as conn:
        conn.execute(insert(REQUESTS), requests)
        rows = [{"tool": a, "mate": b, "weight": w} for (a, b), w in weights.items()]
        conn.execute(insert(PAIRS), rows)


def signals(store: Store, allowed: Callable[[str], bool] = lambda n: True) -> StoreSignals:
    """Signals over ``store``, with the matrix already loaded (as after a process's first turn)."""
    sig = StoreSignals(store, allowed, 2000.0)
    sig.refresh()
    return sig


def ask(sig: StoreSignals, picked: Sequence[str], vectors: Any) -> dict[str, float]:
    """What a planner asks at selection: companions of its picks and the past requests' votes."""
    found = sig.companions(list(picked)[:3])
    found.update(sig.past_requests(np.asarray(vectors, np.float32)))
    return found


def timed_ms(fn: Callable[[], Any]) -> float:
    """Milliseconds of one call."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000
