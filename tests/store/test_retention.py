"""Retention: ``tooltray db prune`` keeps a store within an age and a size, on every growing
table, and gives the space back (issue 33: sessions, results and cached vectors stayed and the
file never shrank, 4.74 MB before and after a prune).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from sqlalchemy import text

from tooltray.memory.cli.main import cli
from tooltray.memory.embedders import clear_memo, default_embedder
from tooltray.memory.embedders.base import text_hash
from tooltray.memory.retrieval.index import ToolIndex
from tooltray.memory.retrieval.scoring import doc_text
from tooltray.memory.store import Store
from tooltray.memory.store.records import Changes, HistoryEvent, Load, TurnRecord
from tooltray.memory.store.retention import file_bytes
from tooltray.memory.store.tables import utcnow
from tooltray.tools.spec import ToolSpec

SOAK = 500
LIMIT_MB = 0.25


def _session(store: Store, i: int) -> None:
    """One short session as the trinket writes it: a load, events, a turn, a long result."""
    sid = f"s{i:05d}"
    changes = Changes(
        turn=1,
        status="ended",
        loads=[Load("web_search", "semantic", 1, 0.5)],
        events=[HistoryEvent(sid, 1, "started"), HistoryEvent(sid, 1, "ended")],
        turn_record=TurnRecord(sid, 1, f"{i:016x}", 120, 5),
    )
    store.apply(sid, changes)
    store.put_result(f"r-{i:05d}", sid, 1, "web_search", "result text " * 200)


def _prune(url: str, *args: str, env: dict[str, str] | None = None) -> Result:
    result = CliRunner().invoke(cli, ["db", "prune", *args, "--db", url], env=env)
    assert result.exit_code == 0, result.output
    return result


def _count(store: Store, table: str) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one())


def test_a_soak_stays_within_the_size_limit(sqlite_url: str) -> None:
    with Store(sqlite_url) as store:
        for i in range(SOAK):
            _session(store, i)
        vectors = {f"h{i}": np.ones(384, dtype=np.float32) for i in range(50)}
        store.put_embeddings("minilm", vectors)
        before = file_bytes(store)
    assert before is not None and before > 2 * LIMIT_MB * 1_000_000
    out = _prune(sqlite_url, "--max-mb", str(LIMIT_MB)).output
    assert "learned state kept" in out and " bytes" in out
    with Store(sqlite_url) as store:
        size = file_bytes(store)
        kept = [s.session_id for s in store.sessions()]
        assert size is not None and size <= LIMIT_MB * 1_000_000
        assert 0 < len(kept) < SOAK and f"s{SOAK - 1:05d}" in kept, "the newest stay"
        assert f"s{0:05d}" not in kept, "the oldest go first"
        for table in ("history", "turns", "results", "loaded_tools"):
            owners = f"SELECT COUNT(DISTINCT session_id) FROM {table}"
            with store.engine.connect() as conn:
                assert conn.execute(text(owners)).scalar_one() == len(kept), table


def test_age_drops_idle_sessions_with_their_rows_and_unused_vectors(db_url: str) -> None:
    with Store(db_url) as store:
        for i in range(6):
            _session(store, i)
        store.put_embeddings("minilm", {"old": np.ones(8, dtype=np.float32)})
        old = utcnow() - timedelta(days=40)
        with store.engine.begin() as conn:
            for table, column in (("sessions", "updated_at"), ("embeddings", "used_at")):
                where = "WHERE id IN ('s00000', 's00001')" if table == "sessions" else ""
                conn.execute(text(f"UPDATE {table} SET {column} = :old {where}"), {"old": old})
        store.put_embeddings("minilm", {"new": np.ones(8, dtype=np.float32)})
    _prune(db_url, "--max-age", "30")
    with Store(db_url) as store:
        assert sorted(s.session_id for s in store.sessions()) == [f"s{i:05d}" for i in (2, 3, 4, 5)]
        assert store.history("s00000") == [] and store.get_result("r-00000") is None
        assert store.get_result("r-00002") is not None and _count(store, "turns") == 4
        assert list(store.get_embeddings("minilm", ["old", "new"])) == ["new"]


def test_the_settings_are_the_policy(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tooltray.db'}"
    with Store(url) as store:
        for i in range(40):
            _session(store, i)
    _prune(url, env={"TOOLTRAY_RETAIN_MB": "0.15", "TOOLTRAY_CONFIG": None})  # type: ignore[dict-item]
    with Store(url) as store:
        assert 0 < len(store.sessions()) < 40  # an empty store is about 0.1 MB
        assert (file_bytes(store) or 0) <= 150_000


@pytest.mark.parametrize("args", [[], ["--no-vacuum"]])
def test_no_policy_is_one_line_naming_the_options(tmp_path: Path, args: list[str]) -> None:
    url = f"sqlite:///{tmp_path / 'tooltray.db'}"
    Store(url).close()
    result = CliRunner().invoke(
        cli, ["db", "prune", *args, "--db", url], env={"TOOLTRAY_CONFIG": None}
    )  # type: ignore[dict-item]
    assert result.exit_code != 0 and "--max-age DAYS or --max-mb MB" in result.output


def _index(url: str, names: list[str]) -> list[str]:
    """Build a catalog's index on the store as a fresh process does; its vectors' hashes."""
    clear_memo()  # a new process: the index asks the store, not this process's memo
    specs = [ToolSpec(name=n, description=f"{n.replace('_', ' ')} in the workspace") for n in names]
    with Store(url) as store:
        index = ToolIndex(specs, default_embedder(), cache=store)
        assert index.dense_ready
    return [text_hash(doc_text(s)) for s in specs]


def _age_vectors(url: str, days: int) -> None:
    old = utcnow() - timedelta(days=days)
    with Store(url) as store, store.engine.begin() as conn:
        conn.execute(text("UPDATE embeddings SET created_at = :old, used_at = :old"), {"old": old})


def test_vectors_of_tools_no_catalog_has_go_and_those_in_use_stay(db_url: str) -> None:
    first = _index(db_url, ["read_file", "write_file", "wipe_disk"])
    other = _index(db_url, ["send_mail"])
    _age_vectors(db_url, 40)  # all made 40 days ago; then the catalog drops wipe_disk
    kept = _index(db_url, ["read_file", "write_file"])
    out = _prune(db_url, "--max-age", "30").output
    assert "and 2 cached-vector rows" in out
    with Store(db_url) as store:
        found = store.get_embeddings(default_embedder().id, [*first, *other])
    assert sorted(found) == sorted(kept), "the old vectors of the current catalog stay"
    assert first[2] not in found and other[0] not in found, "tools in no current catalog go"


def test_a_lookup_inside_a_shared_read_marks_use_after_it(db_url: str) -> None:
    """A public call reads in one shared transaction; the use is written after it ends."""
    with Store(db_url) as store:
        store.put_embeddings("minilm", {"h": np.ones(8, dtype=np.float32)})
    _age_vectors(db_url, 40)
    with Store(db_url) as store:
        with store.reading():
            assert list(store.get_embeddings("minilm", ["h", "missing"])) == ["h"]
        with store.engine.connect() as conn:
            used = conn.execute(text("SELECT used_at FROM embeddings")).scalar_one()
    assert _prune(db_url, "--max-age", "30").output.count("and 0 cached-vector rows") == 1
    assert used is not None
