"""URL resolution, connection settings, and retries on a really locked SQLite file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DatabaseError

from tooltray.memory.cli.sqlconsole.readonly import readonly_engine
from tooltray.memory.store import Store, make_engine, resolve_url
from tooltray.memory.store.records import Changes, Load
from tooltray.memory.store.store import is_transient, with_retries
from tooltray.tools.errors import StoreError


def test_resolve_url_prefers_argument_then_env_then_cwd(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLTRAY_DB", raising=False)
    assert resolve_url(None) == f"sqlite:///{tmp_path / 'tooltray.db'}"
    monkeypatch.setenv("TOOLTRAY_DB", "sqlite:////data/env.db")
    assert resolve_url(None) == "sqlite:////data/env.db"
    assert resolve_url("sqlite:////data/arg.db") == "sqlite:////data/arg.db"
    assert resolve_url("rel/file.db") == f"sqlite:///{tmp_path / 'rel' / 'file.db'}"
    assert resolve_url("postgres://u@h/d") == "postgresql+psycopg://u@h/d"
    assert resolve_url("postgresql://u@h/d") == "postgresql+psycopg://u@h/d"


def test_in_memory_store_works_within_one_instance() -> None:
    with Store("sqlite://") as store:
        snap = store.apply("m", Changes(turn=1, loads=[Load("a", "core", 1)]))
        assert store.snapshot("m") == snap
        assert store.engine.connect().exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_unsupported_and_malformed_urls_are_clear_errors() -> None:
    with pytest.raises(StoreError, match="unsupported database 'mysql'"):
        Store("mysql://u@h/d")
    with pytest.raises(StoreError, match="not a database URL"):
        make_engine("://nowhere")


def test_sqlite_connections_are_tuned_for_sharing(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    with engine.connect() as conn:
        pragmas = {
            name: conn.exec_driver_sql(f"PRAGMA {name}").scalar()
            for name in ("journal_mode", "busy_timeout", "foreign_keys", "synchronous")
        }
    engine.dispose()
    assert pragmas == {
        "journal_mode": "wal",
        "busy_timeout": 5000,
        "foreign_keys": 1,
        "synchronous": 1,
    }


def test_sqlite_readonly_connection_refuses_attach_without_creating_files(
    sqlite_url: str, tmp_path: Path
) -> None:
    Store(sqlite_url).close()
    target = tmp_path / "attached.db"
    copy = tmp_path / "copy.db"
    engine = readonly_engine(sqlite_url)
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA query_only").scalar() == 1
        assert conn.exec_driver_sql("SELECT count(*) FROM sessions").scalar() == 0
        for statement in (f"ATTACH DATABASE '{target}' AS other", f"VACUUM INTO '{copy}'"):
            with pytest.raises(DatabaseError, match="not authorized|authorization denied"):
                conn.exec_driver_sql(statement)
    engine.dispose()
    assert not target.exists() and not copy.exists()


def test_readonly_engine_needs_an_existing_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no database file"):
        readonly_engine(str(tmp_path / "missing.db"))
    assert not (tmp_path / "missing.db").exists()


def test_postgres_readonly_sessions_default_to_read_only(pg_url: str) -> None:
    Store(pg_url).close()
    engine = readonly_engine(pg_url)
    with engine.connect() as conn:
        assert conn.execute(text("SHOW default_transaction_read_only")).scalar() == "on"
        with pytest.raises(Exception, match="read-only transaction"):
            conn.execute(text("INSERT INTO tooltray_meta (key, value) VALUES ('a', 'b')"))
    engine.dispose()


def test_retries_outlast_a_real_lock_and_then_give_up_clearly(sqlite_url: str) -> None:
    Store(sqlite_url).close()
    path = sqlite_url.removeprefix("sqlite:///")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    impatient = create_engine(sqlite_url, connect_args={"timeout": 0})
    calls: list[int] = []

    def write() -> int:
        calls.append(1)
        if len(calls) == 3:
            holder.execute("ROLLBACK")
        with impatient.begin() as conn:
            conn.execute(
                text("INSERT INTO tooltray_meta (key, value) VALUES (:k, 'v')"), {"k": len(calls)}
            )
        return len(calls)

    assert with_retries(write, what="write a row") == 3
    holder.execute("BEGIN IMMEDIATE")
    with pytest.raises(StoreError, match="stayed busy after 3 attempts"):
        with_retries(write, what="write a row", attempts=3)
    holder.execute("ROLLBACK")
    holder.close()
    impatient.dispose()


def test_non_transient_errors_fail_at_once(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    calls: list[int] = []

    def bad() -> None:
        calls.append(1)
        with engine.begin() as conn:
            conn.execute(text("SELECT * FROM no_such_table"))

    with pytest.raises(StoreError, match="could not read it: no such table") as info:
        with_retries(bad, what="read it")
    assert calls == [1] and not is_transient(info.value)
    engine.dispose()
