"""Several writers on one session (threads and processes), and a restart in a fresh process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections import Counter

from tooltray.memory.store import Store
from tooltray.memory.store.records import Changes, HistoryEvent, Load, Use

WORKERS = 4
APPLIES = 50
# Seconds a store call may wait: the store's contract is to retry within that budget, and these
# tests are about losing nothing, not latency; a loaded machine can keep a writer waiting past
# the 1 s default, which must not fail them.
PATIENT = 600


def _work(url: str, worker: int, errors: list[BaseException]) -> None:
    try:
        with Store(url, wait=PATIENT) as store:
            for i in range(APPLIES):
                name = f"w{worker}_{i}"
                changes = Changes(
                    turn=i, loads=[Load(name, "semantic", i)], uses=[Use("shared", i), Use(name, i)]
                )
                snap = store.apply("shared-session", changes)
                assert name in snap.names()
    except BaseException as exc:  # collected and re-raised in the main thread
        errors.append(exc)


def _assert_nothing_lost(store: Store, workers: int) -> None:
    snap = store.snapshot("shared-session")
    assert snap is not None
    expected = {f"w{w}_{i}" for w in range(workers) for i in range(APPLIES)}
    assert set(snap.names()) == expected | {"shared"}
    positions = [t.position for t in snap.loaded]
    assert len(set(positions)) == len(positions) == len(expected) + 1
    for tool in snap.loaded:
        expected_turn = APPLIES - 1 if tool.name == "shared" else int(tool.name.split("_")[1])
        assert tool.last_used_turn == expected_turn, tool
    counts = Counter(e.kind for e in store.history("shared-session"))
    assert counts["used"] == workers * APPLIES * 2
    assert counts["loaded"] == workers * APPLIES + 1
    assert snap.turn == APPLIES - 1


def test_concurrent_threads_lose_no_loads_or_uses(db_url: str) -> None:
    with Store(db_url) as store:
        store.apply("shared-session", Changes(loads=[Load("shared", "core", 0)]))
        errors: list[BaseException] = []
        threads = [threading.Thread(target=_work, args=(db_url, w, errors)) for w in range(WORKERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors, errors
        _assert_nothing_lost(store, WORKERS)
        shared = next(t for t in store.snapshot("shared-session").loaded if t.name == "shared")  # type: ignore[union-attr]
        assert shared.last_used_turn == APPLIES - 1 and shared.position == 0


PROCESS_SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {here!r})
    from test_concurrency import _work
    errors = []
    _work(sys.argv[1], int(sys.argv[2]), errors)
    if errors:
        raise errors[0]
    """
)


def test_concurrent_processes_lose_no_loads_or_uses(sqlite_url: str) -> None:
    from pathlib import Path

    with Store(sqlite_url) as store:
        store.apply("shared-session", Changes(loads=[Load("shared", "core", 0)]))
    script = PROCESS_SCRIPT.format(here=str(Path(__file__).parent))
    procs = [
        subprocess.Popen([sys.executable, "-c", script, sqlite_url, str(w)], stderr=subprocess.PIPE)
        for w in range(3)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    with Store(sqlite_url) as store:
        _assert_nothing_lost(store, 3)


WRITER = textwrap.dedent(
    """
    import sys
    from tooltray.memory.store import Store
    from tooltray.memory.store.records import Changes, Load, Use, TurnRecord
    with Store(sys.argv[1]) as store:
        store.apply("r", Changes(turn=1, loads=[Load("b", "core", 1), Load("a", "skill", 1, 0.5)]))
        store.apply("r", Changes(
            turn=2, loads=[Load("f", "fallback", 2, fallback=True)], uses=[Use("a", 2)],
            turn_record=TurnRecord("r", 2, "h" * 64, 77, 3), meta={"mode": "selected"}))
        print(repr(store.snapshot("r")))
    """
)


def test_restart_in_a_fresh_process_sees_the_same_snapshot(db_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WRITER, db_url], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    with Store(db_url) as store:
        snap = store.snapshot("r")
        assert snap is not None
        assert repr(snap) == done.stdout.strip()
        assert snap.names() == ["b", "a", "f"] and snap.loaded[1].last_used_turn == 2
        assert snap.loaded[2].fallback and snap.meta == {"mode": "selected"}
        assert store.turns("r")[0].tool_tokens == 77


def _start(url: str, gate: threading.Barrier, out: list[object]) -> None:
    try:
        with Store(url, wait=PATIENT) as store:
            started = Changes(meta={"selected": False}, events=[HistoryEvent("new", 0, "started")])
            started.only_new = True
            gate.wait(timeout=30)
            out.append(store.apply("new", started).meta)
    except BaseException as exc:  # collected and re-raised in the main thread
        out.append(exc)


def test_writers_starting_one_new_session_at_once_start_it_once(db_url: str) -> None:
    Store(db_url).close()
    gate, out = threading.Barrier(WORKERS), []  # type: ignore[var-annotated]
    threads = [threading.Thread(target=_start, args=(db_url, gate, out)) for _ in range(WORKERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert out == [{"selected": False}] * WORKERS, out
    with Store(db_url) as store:
        assert [e.kind for e in store.history("new")] == ["started"]
