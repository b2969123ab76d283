"""The learned tables on SQLite and PostgreSQL: co-use, past requests, decay, bounds, prune."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from alembic import command
from click.testing import CliRunner
from sqlalchemy import text

from tooltray.memory.cli.main import cli
from tooltray.memory.learning import StoreSignals
from tooltray.memory.store import Changes, Store, Use, current, head, make_engine
from tooltray.memory.store.migrate import alembic_config
from tooltray.memory.store.records import Learning, TurnRecord
from tooltray.memory.tuning import COMPANION_PRIOR

DIM = 8


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def teach(
    store: Store, sid: str, turn: int, tools: list[str], seed: int | None = None, **kw: object
) -> None:
    vector = unit(seed).tobytes() if seed is not None else None
    lesson = Learning(turn, tuple(tools), vector, "test-embedder", **kw)  # type: ignore[arg-type]
    store.apply(sid, Changes(turn=turn, uses=[Use(t, turn) for t in tools], learn=lesson))


def rows(store: Store, sql: str) -> list[tuple[object, ...]]:
    with store.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(sql))]


def signals(store: Store, half_life: float = 2000.0, deny: set[str] = set()) -> StoreSignals:  # noqa: B006
    return StoreSignals(store, lambda n: n not in deny, half_life)


def test_a_turn_teaches_its_pairs_and_its_request_once(db_url: str) -> None:
    with Store(db_url) as store:
        teach(store, "s", 1, ["cd", "mv"], seed=1)
        teach(store, "s", 1, ["cd", "mv"], seed=1)  # a replayed turn (restart) teaches nothing
        assert rows(store, "SELECT session_id, turn, text FROM learn_requests") == [("s", 1, None)]
        pairs = rows(store, "SELECT tool, mate, weight FROM learn_pairs ORDER BY tool, mate")
        assert [(a, b) for a, b, _ in pairs] == [
            ("cd", "cd"),
            ("cd", "mv"),
            ("mv", "cd"),
            ("mv", "mv"),
        ]
        assert len({w for _, _, w in pairs}) == 1
        found = signals(store).companions(["mv"])
        assert set(found) == {"cd"} and found["cd"] == pytest.approx(
            1 / (1 + COMPANION_PRIOR), rel=0.01
        )


def test_next_turn_tools_become_companions_both_ways(db_url: str) -> None:
    with Store(db_url) as store:
        for n in range(4):
            sid = f"s{n}"
            teach(store, sid, 1, ["GetUserToken"])
            teach(store, sid, 2, ["AddAgenda"])
            teach(store, sid, 4, ["QueryStock"])  # turn 3 used nothing: no pair with AddAgenda
        sig = signals(store)
        expected = 4 / (4 + COMPANION_PRIOR)  # four sessions, each using both: 4 / (own 4 + prior)
        assert sig.companions(["AddAgenda"])["GetUserToken"] == pytest.approx(expected, rel=0.01)
        assert sig.companions(["GetUserToken"])["AddAgenda"] == pytest.approx(expected, rel=0.01)
        assert "QueryStock" not in sig.companions(["AddAgenda"])


def test_decay_lets_a_new_habit_replace_an_old_one(db_url: str) -> None:
    with Store(db_url) as store:
        for turn in range(1, 6):
            teach(store, "old", turn, ["mv", "ls"], half_life=3.0)
        before = signals(store, 3.0).companions(["mv"])["ls"]
        for turn in range(1, 13):
            teach(store, "new", turn, ["mv", "cd"], half_life=3.0)
        after = signals(store, 3.0).companions(["mv"])
        steady = sum(2 ** (-j / 3.0) for j in range(5))  # five co-uses, the oldest decayed
        assert before == pytest.approx(steady / (steady + COMPANION_PRIOR), rel=0.01)
        assert after.get("ls", 0.0) < 0.1 < 0.5 < after["cd"]


def test_past_requests_vote_by_similarity_and_age(db_url: str) -> None:
    with Store(db_url) as store:
        teach(store, "a", 1, ["old_tool"], seed=7, half_life=2.0)
        for turn in range(2, 8):
            teach(store, "a", turn, [f"t{turn}"], seed=100 + turn, half_life=2.0)
        teach(store, "b", 1, ["new_tool"], seed=7, half_life=2.0)  # same request, taught last
        votes = signals(store, 2.0).past_requests(unit(7)[None, :])
        assert votes["new_tool"] > 0.9 and 0 < votes["old_tool"] < 0.1
        assert not set(votes) & {f"t{n}" for n in range(2, 8)}  # unrelated vectors do not vote
        assert signals(store).past_requests(np.ones((1, DIM + 1), np.float32)) == {}


def test_votes_asked_again_with_other_weights_match_a_fresh_reader(db_url: str) -> None:
    """Growth asks the same messages twice; the reused similarities must never go stale."""
    axes = np.eye(DIM, dtype=np.float32)

    def taught(sid: str, turn: int, tool: str, axis: int) -> None:
        lesson = Learning(turn, (tool,), axes[axis].tobytes(), "test-embedder")
        store.apply(sid, Changes(turn=turn, uses=[Use(tool, turn)], learn=lesson))

    with Store(db_url) as store:
        taught("a", 1, "first", 0)
        taught("a", 2, "second", 1)
        stack, sig = axes[:2].copy(), signals(store)
        assert set(sig.past_requests(stack, [1.0, 0.0])) == {"first"}
        assert set(sig.past_requests(stack, [0.0, 1.0])) == {"second"}
        taught("b", 1, "again", 1)  # a new row: the similarities computed before are stale
        votes = sig.past_requests(stack, [0.0, 1.0])
        assert votes == signals(store).past_requests(stack, [0.0, 1.0])
        assert set(votes) == {"second", "again"}


def test_a_sessions_own_past_turns_do_not_vote_for_it(db_url: str) -> None:
    with Store(db_url) as store:
        teach(store, "mine", 1, ["cancel_booking"], seed=3)
        teach(store, "other", 1, ["create_ticket"], seed=3)
        sig, query = signals(store), unit(3)[None, :]
        assert set(sig.past_requests(query)) == {"cancel_booking", "create_ticket"}
        assert set(sig.past_requests(query, session="mine")) == {"create_ticket"}
        assert set(sig.past_requests(query, session="unknown")) == {
            "cancel_booking",
            "create_ticket",
        }


def test_rescaling_keeps_weights_finite_and_ratios(db_url: str) -> None:
    with Store(db_url) as store:
        for turn in range(1, 150):  # 149 turns at a half-life of 0.25: past the 512 rescale
            tools = ["a", "c"] if turn <= 100 else ["a", "b"]
            teach(store, "s", turn, tools, half_life=0.25, max_requests=5)
        epoch = rows(store, "SELECT value FROM tooltray_meta WHERE key = 'learn_epoch'")
        assert epoch and 0 < int(str(epoch[0][0])) <= 149
        weights = [float(w) for (w,) in rows(store, "SELECT weight FROM learn_pairs")]
        assert all(np.isfinite(w) for w in weights) and max(weights) < 2.0**520
        found = signals(store, 0.25).companions(["a"])
        assert found["b"] > 0.2 > 0.01 > found.get("c", 0.0)  # the last c was 48 turns ago


def test_bounds_evict_the_oldest_requests_and_the_weakest_pairs(db_url: str) -> None:
    with Store(db_url) as store:
        sig = signals(store)
        for turn in range(1, 41):
            teach(store, "s", turn, [f"x{turn}", "hub"], seed=turn, max_requests=6, max_pairs=30)
            if turn == 20:
                sig.refresh()
        (count,) = rows(store, "SELECT COUNT(*) FROM learn_requests")[0]
        assert count == 6
        assert rows(store, "SELECT MIN(turn) FROM learn_requests") == [(35,)]
        (pairs,) = rows(store, "SELECT COUNT(*) FROM learn_pairs")[0]
        assert 0 < int(str(pairs)) <= 30 + 8
        assert ("hub", "hub") in {
            tuple(r) for r in rows(store, "SELECT tool, mate FROM learn_pairs")
        }
        sig.refresh()
        matrix, ids, _ = sig._rows.view()
        assert matrix is not None and list(ids) == list(range(35, 41))


def test_denied_tools_are_never_boosted(db_url: str) -> None:
    with Store(db_url) as store:
        teach(store, "s", 1, ["rm_rf", "ls"], seed=3)
        sig = signals(store, deny={"rm_rf"})
        assert sig.companions(["ls"]) == {}
        assert set(sig.past_requests(unit(3)[None, :])) == {"ls"}


def test_a_second_process_sees_what_the_first_learned(db_url: str, tmp_path: Path) -> None:
    with Store(db_url) as store:
        teach(store, "here", 1, ["cd", "ls"], seed=5)
        sig = signals(store)
        assert sig.companions(["cd"]).keys() == {"ls"}
        assert sig.refresh() > 0
        script = (
            "import sys, numpy as np\n"
            "from tooltray.memory.store import Changes, Store\n"
            "from tooltray.memory.store.records import Learning, TurnRecord\n"
            "v = np.zeros(8, np.float32); v[0] = 1\n"
            "with Store(sys.argv[1]) as s:\n"
            "    s.apply('there', Changes(turn=1, learn=Learning(1, ('cd', 'mv'), v.tobytes())))\n"
        )
        env = dict(os.environ)
        done = subprocess.run(
            [sys.executable, "-c", script, db_url],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert set(sig.companions(["cd"])) == {"ls", "mv"}
        query = np.zeros((1, DIM), np.float32)
        query[0, 0] = 1
        votes = sig.past_requests(query)
        assert votes["mv"] == pytest.approx(votes["cd"]) and votes["mv"] > 0.4


def test_prune_drops_old_history_and_keeps_what_was_learned(db_url: str) -> None:
    with Store(db_url) as store:
        teach(store, "s", 1, ["cd", "mv"], seed=1)
        teach(store, "s", 2, ["git_commit"], seed=2)
        store.apply("s", Changes(turn_record=TurnRecord("s", 2, "h", 10, 2)))
        learned = rows(store, "SELECT * FROM learn_pairs ORDER BY tool, mate")
        requests = rows(store, "SELECT id, tools, vector FROM learn_requests ORDER BY id")
        before = signals(store).companions(["git_commit"])
        assert rows(store, "SELECT COUNT(*) FROM history")[0][0] != 0
    tomorrow = (datetime.now(timezone.utc) + timedelta(days=1)).strftime("%Y-%m-%d")
    result = CliRunner().invoke(cli, ["db", "prune", "--before", tomorrow, "--db", db_url])
    assert result.exit_code == 0, result.output
    assert "learned state kept" in result.output
    with Store(db_url) as store:
        assert rows(store, "SELECT COUNT(*) FROM history") == [(0,)]
        assert rows(store, "SELECT COUNT(*) FROM turns") == [(0,)]
        assert rows(store, "SELECT * FROM learn_pairs ORDER BY tool, mate") == learned
        assert rows(store, "SELECT id, tools, vector FROM learn_requests ORDER BY id") == requests
        assert signals(store).companions(["git_commit"]) == before
        assert store.snapshot("s") is not None
        teach(store, "s", 3, ["git_push"], seed=3)  # the next turn still pairs with turn 2
        assert "git_commit" in signals(store).companions(["git_push"])


def test_prune_keeps_newer_history(sqlite_url: str) -> None:
    with Store(sqlite_url) as store:
        teach(store, "s", 1, ["cd"])
    result = CliRunner().invoke(cli, ["db", "prune", "--before", "2000-01-01", "--db", sqlite_url])
    assert result.exit_code == 0, result.output
    assert "dropped 0 history and 0 turn rows" in result.output
    with Store(sqlite_url) as store:
        assert rows(store, "SELECT COUNT(*) FROM history")[0][0] == 1


def test_an_existing_0002_database_is_upgraded_with_its_data(db_url: str) -> None:
    engine = make_engine(db_url)
    with engine.begin() as conn:
        command.upgrade(alembic_config(db_url, conn), "0002")
        conn.execute(
            text(
                "INSERT INTO sessions (id, turn, status, meta, created_at, updated_at) "
                "VALUES ('old', 3, 'active', '{}', '2025-01-01', '2025-01-01')"
            )
        )
    engine.dispose()
    assert current(db_url) == "0002"
    result = CliRunner().invoke(cli, ["db", "upgrade", "--db", db_url])
    assert result.exit_code == 0, result.output
    assert current(db_url) == head() == "0006"
    with Store(db_url) as store:
        snapshot = store.snapshot("old")
        assert snapshot is not None and snapshot.turn == 3
        teach(store, "old", 4, ["cd", "ls"], seed=1)
        assert signals(store).companions(["cd"]).keys() == {"ls"}


def test_signals_over_a_broken_database_answer_nothing(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    store = Store(f"sqlite:///{path}")
    store.close()  # the store stays usable; its file breaks under it
    path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 40)
    sig = StoreSignals(store, lambda n: True, 10.0)
    assert sig.companions(["cd"]) == {}
    assert sig.past_requests(np.ones((1, DIM), np.float32)) == {}


def test_session_needs_are_first_turn_tools_plus_a_share_of_later_ones(db_url: str) -> None:
    with Store(db_url) as store:
        sig = signals(store)
        assert sig.session_needs(0.3) == (0.0, 0)
        teach(store, "a", 1, ["cd", "mv"], seed=1)
        teach(store, "a", 2, ["mv", "grep"], seed=2)  # one new tool later: 2 + 0.3
        teach(store, "a", 3, ["sort", "diff"], seed=3)  # two more: 2 + 0.9
        teach(store, "b", 1, ["ls"], seed=4)
        teach(store, "b", 2, ["tail"])  # no vector: not a past request, not counted
        mean, n = sig.session_needs(0.3)
        assert n == 2 and mean == pytest.approx((2.9 + 1.0) / 2)
        teach(store, "c", 1, ["pwd"], seed=5)  # the cached answer follows new rows
        assert sig.session_needs(0.3) == (pytest.approx((2.9 + 1.0 + 1.0) / 3), 3)
        assert sig.session_needs(1.0)[0] == pytest.approx((5.0 + 1.0 + 1.0) / 3)
