"""Honest log levels: writers that wait out another's SQLite lock lose nothing and log no ERROR.

Four trinkets (threads, one SQLite file) write while a fifth connection holds the write lock past
their budget: each queues its change and says so once at WARNING, then stores it when the lock
is gone. Before, each such wait was an ERROR although nothing was lost.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any

from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.store import Store
from tooltray.tools.demo import demo_registry

WRITERS = 4


def _turns(n: int) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for i in range(n):
        out += [{"role": "user", "content": f"weather in Oslo, day {i}"}]
        out += [{"role": "assistant", "content": "Sunny."}]
    return out[:-1]


def _in_threads(trinkets: list[ToolLoaderTrinket], turns: int) -> None:
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            trinkets[i].prepare(f"s{i}", _turns(turns))
        except BaseException as exc:  # re-raised below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


def test_a_lock_the_writers_wait_out_is_no_error(tmp_path: Path, caplog: Any) -> None:
    url = f"sqlite:///{tmp_path / 'tooltray.db'}"
    settings = Settings(db=url, learn="off", store_wait=0.05)
    Store(url).close()
    trinkets = [ToolLoaderTrinket(demo_registry(), settings=settings) for _ in "abcd"]
    holder = sqlite3.connect(tmp_path / "tooltray.db", isolation_level=None)
    with caplog.at_level(logging.DEBUG, logger="tooltray"):
        holder.execute("BEGIN IMMEDIATE")
        _in_threads(trinkets, 1)
        holder.execute("ROLLBACK")
        _in_threads(trinkets, 2)
    holder.close()
    for trinket in trinkets:
        trinket.close()
    levels = {r.levelno for r in caplog.records if "database is locked" in r.getMessage()}
    assert logging.WARNING in levels, "giving up on a busy database is said once"
    assert all(r.levelno < logging.ERROR for r in caplog.records), [
        r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR
    ]
    with Store(url) as store:
        assert [store.snapshot(f"s{i}").turn for i in range(WRITERS)] == [2] * WRITERS  # type: ignore[union-attr]
