"""Retention soak: many short sessions on one SQLite store, then ``tooltray db prune --max-mb``.

Each session is what the trinket writes for a one-turn conversation (a load, two events, a turn
record, a 2,400-character stored result), written through the real store; 100 cached vectors
stand in for a catalog's. The figures: the file (with its WAL) before and after the prune, the
limit, the sessions kept, and the prune's wall time. ``--quick``: 1,000 sessions.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner

from tooltray.memory.cli.main import cli
from tooltray.memory.store import Store
from tooltray.memory.store.records import Changes, HistoryEvent, Load, TurnRecord
from tooltray.memory.store.retention import file_bytes

SESSIONS = 10_000
LIMIT_MB = 1.0


def write_session(store: Store, i: int) -> None:
    sid = f"s{i:06d}"
    changes = Changes(
        turn=1,
        status="ended",
        loads=[Load("web_search", "semantic", 1, 0.5)],
        events=[HistoryEvent(sid, 1, "started"), HistoryEvent(sid, 1, "ended")],
        turn_record=TurnRecord(sid, 1, f"{i:016x}", 120, 5),
    )
    store.apply(sid, changes)
    store.put_result(f"r-{i:06d}", sid, 1, "web_search", "result text " * 200)


def run(data_dir: Path, out_dir: Path, *, quick: bool = False) -> dict[str, Any]:
    """Soak, measure, prune, measure."""
    count = 1_000 if quick else SESSIONS
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'soak.db'}"
        with Store(url) as store:
            for i in range(count):
                write_session(store, i)
            vectors = {f"h{i}": np.ones(384, dtype=np.float32) for i in range(100)}
            store.put_embeddings("minilm", vectors)
        with Store(url) as store:
            before = file_bytes(store)
        start = time.perf_counter()
        result = CliRunner().invoke(cli, ["db", "prune", "--max-mb", str(LIMIT_MB), "--db", url])
        seconds = time.perf_counter() - start
        with Store(url) as store:
            after, kept = file_bytes(store), len(store.sessions())
    return {
        "sessions": count,
        "limit_bytes": int(LIMIT_MB * 1_000_000),
        "bytes_before": before,
        "bytes_after": after,
        "sessions_kept": kept,
        "prune_seconds": round(seconds, 1),
        "output": result.output.strip(),
    }
