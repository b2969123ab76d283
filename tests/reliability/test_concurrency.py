"""Concurrent writers: agent processes on one database, on separate sessions and one shared.

Each process drives the real trinket (prepare, load/unload, tool-used, turn-completed) over the
demo catalog. The end state is compared with a serial run of the same scripts: per session exactly
(separate sessions), and on everything that does not depend on interleaving (shared session).
No lock error may reach the agent: the trinket logs none, queues nothing, never degrades.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import reliability_support as rs

from tooltray.memory.store import Store

SHARED = "shared"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def databases(
    request: pytest.FixtureRequest, template_db: Path, tmp_path: Path, vectors: rs.Vectors
) -> Iterator[tuple[str, Callable[[], str]]]:
    """(backend, factory of fresh seeded databases) for SQLite files and PostgreSQL."""
    if request.param == "sqlite":
        made = iter(range(1000))

        def fresh() -> str:
            path = tmp_path / f"conc{next(made)}.db"
            shutil.copy(template_db, path)
            return f"sqlite:///{path}"

        yield "sqlite", fresh
        return
    with rs.pg_databases(vectors) as factory:
        yield "postgresql", factory


def states(url: str, sessions: list[str]) -> dict[str, dict[str, Any]]:
    with Store(url) as store:
        return {s: rs.session_state(store, s) for s in sessions}


# The store's contract under contention is to retry within ``store_wait``; these tests check
# that nothing is lost or doubled, so the budget is generous: a loaded machine can keep a writer
# waiting past the 1 s default, and that must not turn into an error the test counts.
PATIENT = '{"store_wait": 600}'
NO_LEARNING = '{"learn": "off", "store_wait": 600}'


def in_process(args: list[str]) -> dict[str, Any]:
    """Run worker jobs in this process (no start-up cost): the serial reference runs here."""
    spec = importlib.util.spec_from_file_location("reliability_worker", rs.WORKER)
    assert spec is not None and spec.loader is not None
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    report: dict[str, Any] = worker.execute(worker.parse_args(args))
    return report


def run_all(spawn: Any, jobs: list[list[str]]) -> list[dict[str, Any]]:
    procs = [spawn(*args) for args in jobs]
    for proc in procs:
        proc.drain(timeout=3600)
    return [proc.stats() for proc in procs]


def check_clean(stats: list[dict[str, Any]]) -> None:
    for one in stats:
        assert one["error_count"] == 0, one["errors"]
        assert not one["meta_errors"], one["meta_errors"]


def record(
    figures: dict[str, Any], key: str, sizes: Any, stats: list[dict[str, Any]], lost: int
) -> None:
    figures[key] = {
        "processes": len(stats),
        "sessions_per_process": 2,
        "turns_per_session": sizes.turns,
        "turns": 2 * len(stats) * sizes.turns,
        "writes": sum(s["writes"] for s in stats),
        "retries": sum(s["retries"] for s in stats),
        "errors_reaching_agent": sum(s["error_count"] for s in stats),
        "seconds": max(s["elapsed"] for s in stats),
        "lost_or_different": lost,
    }


def test_concurrent_writers_end_where_a_serial_run_ends(
    spawn: Any, databases: tuple[str, Callable[[], str]], sizes: Any, figures: dict[str, Any]
) -> None:
    """Each process drives one shared session and its own session; compare with a serial run.

    Learning is off: with it, each session's selection reads what the others taught so far, which
    depends on how the processes interleave (by design), not on whether a write was lost.
    """
    backend, fresh = databases
    url, serial_url = fresh(), fresh()
    n = sizes.processes
    base = ["load", "--turns", str(sizes.turns), "--workers", str(n), "--settings", NO_LEARNING]
    opened = [
        in_process(["load", "--db", u, "--settings", NO_LEARNING, "--job", f"open:{SHARED}:0"])
        for u in (url, serial_url)
    ]
    jobs = [[f"shared:{SHARED}:{w}", f"script:own-{w}:{100 + w}"] for w in range(n)]
    stats = run_all(spawn, [[*base, "--db", url, *_flags(pair)] for pair in jobs])
    serial = in_process([*base, "--db", serial_url, *_flags([j for p in jobs for j in p])])
    check_clean([*opened, *stats, serial])
    own = [f"own-{w}" for w in range(n)]
    got, want = states(url, [SHARED, *own]), states(serial_url, [SHARED, *own])
    shared_got, shared_want = rs.shared_summary(got[SHARED]), rs.shared_summary(want[SHARED])
    lost = sum(got[s] != want[s] for s in own) + int(shared_got != shared_want)
    record(figures, f"concurrency_{backend}", sizes, stats, lost)
    for session in own:
        assert got[session] == want[session], session
        assert got[session]["session"][0] == sizes.turns
    assert shared_got == shared_want
    assert shared_got["positions_unique"]
    assert dict(shared_got["history"])[("used", "web_search")] == n * sizes.turns
    assert ("web_search", sizes.turns) in shared_got["last_used"]


def _flags(jobs: list[str]) -> list[str]:
    return [arg for job in jobs for arg in ("--job", job)]


def test_processes_opening_one_new_session_at_once_start_it_once(
    spawn: Any, template_db: Path, tmp_path: Path
) -> None:
    """Several processes whose first call opens the same new session: one ``started`` and one
    first selection in the history, as when they come one after another."""
    path = tmp_path / "race.db"
    shutil.copy(template_db, path)
    url = f"sqlite:///{path}"
    job = ["load", "--db", url, "--settings", PATIENT, "--job", "open:race:0"]
    check_clean(run_all(spawn, [job] * 4))
    with Store(url) as store:
        kinds = [e.kind for e in store.history("race")]
    assert kinds.count("started") == 1, kinds
    assert kinds.count("selected") == 1, kinds
