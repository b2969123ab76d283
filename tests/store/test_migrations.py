"""Schema versions: fresh databases upgrade, others are refused with the fix, strangers kept."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from alembic import command
from click.testing import CliRunner
from sqlalchemy import Inspector, inspect, text

from tooltray.memory.cli.main import cli
from tooltray.memory.store import Store, current, make_engine, upgrade
from tooltray.memory.store.migrate import alembic_config, check, head, known_revisions
from tooltray.memory.store.tables import TABLES
from tooltray.tools.errors import SchemaVersionError, StoreError

T = TypeVar("T")


def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return set(inspect(conn).get_table_names())
    finally:
        engine.dispose()


def _upgrade_to(url: str, revision: str) -> None:
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(url, conn), revision)
    finally:
        engine.dispose()


def _at_with_row(url: str, revision: str, sql: str) -> None:
    """The database at ``revision`` holding the row ``sql`` inserts (``:v``, a 1-d vector)."""
    _upgrade_to(url, revision)
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text(sql), {"v": b"\x00\x00\x80\x3f"})
    finally:
        engine.dispose()


def _downgraded(url: str, revision: str, look: Callable[[Inspector], T]) -> T:
    """What ``look`` reads of the schema once the database is downgraded to ``revision``."""
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            command.downgrade(alembic_config(url, conn), revision)
            return look(inspect(conn))
    finally:
        engine.dispose()


def _set_revision(url: str, revision: str) -> None:
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = :r"), {"r": revision})
    finally:
        engine.dispose()


def test_fresh_database_is_upgraded_to_head_on_open(db_url: str) -> None:
    assert current(db_url) is None
    with Store(db_url) as store:
        assert store.snapshot("nobody") is None
    assert current(db_url) == head()
    assert set(TABLES) | {"alembic_version"} <= _tables(db_url)


def test_models_and_migrations_agree(db_url: str) -> None:
    upgrade(db_url)
    check(db_url)
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            command.check(alembic_config(db_url, conn))  # raises on any difference
    finally:
        engine.dispose()


def test_downgrade_to_base_and_back(sqlite_url: str) -> None:
    upgrade(sqlite_url)
    _upgrade_to(sqlite_url, head())
    engine = make_engine(sqlite_url)
    with engine.begin() as conn:
        command.downgrade(alembic_config(sqlite_url, conn), "base")
    engine.dispose()
    assert _tables(sqlite_url) == {"alembic_version"}
    upgrade(sqlite_url)
    assert current(sqlite_url) == head()


def test_older_revision_is_refused_then_upgraded_by_the_cli(db_url: str) -> None:
    older = sorted(known_revisions() - {head()})[0]
    _upgrade_to(db_url, older)
    with pytest.raises(SchemaVersionError) as info:
        Store(db_url)
    message = str(info.value)
    assert f"schema is at {older}" in message and f"needs {head()}" in message
    assert "tooltray db upgrade --db" in message and "back up first" in message
    assert current(db_url) == older

    result = CliRunner().invoke(cli, ["db", "upgrade", "--db", db_url])
    assert result.exit_code == 0, result.output
    assert f"upgraded from {older} to {head()}" in result.output
    with Store(db_url) as store:
        assert store.apply("s", store_changes()).turn == 1


def store_changes():  # type: ignore[no-untyped-def]
    from tooltray.memory.store.records import Changes

    return Changes(turn=1)


def test_older_revision_upgrades_itself_with_auto_upgrade(sqlite_url: str) -> None:
    _upgrade_to(sqlite_url, "0001")
    with Store(sqlite_url, auto_upgrade=True) as store:
        assert store.snapshot("x") is None
    assert current(sqlite_url) == head()


def test_newer_revision_is_refused_and_left_alone(db_url: str) -> None:
    upgrade(db_url)
    _set_revision(db_url, "9999_from_the_future")
    for attempt in (lambda: Store(db_url), lambda: Store(db_url, auto_upgrade=True)):
        with pytest.raises(SchemaVersionError, match="written by a newer tooltray") as info:
            attempt()
        assert "upgrade tooltray" in str(info.value)
    with pytest.raises(SchemaVersionError, match="newer tooltray"):
        upgrade(db_url)
    assert current(db_url) == "9999_from_the_future"


def _foreign_file(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.commit()
    conn.close()


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("kind", ["foreign", "corrupt"])
def test_stranger_files_are_refused_and_never_modified(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "data.db"
    if kind == "foreign":
        _foreign_file(path)
        expected = "is not a tooltray database"
    else:
        path.write_bytes(os.urandom(4096))
        expected = "move it aside or restore a backup"
    before = _listing(tmp_path)
    url = f"sqlite:///{path}"
    attempts = [
        lambda: Store(url),
        lambda: Store(url, auto_upgrade=True),
        lambda: upgrade(url),
        lambda: current(url),
    ]
    for attempt in attempts:
        with pytest.raises(StoreError) as info:
            attempt()
        assert expected in str(info.value) and str(path) in str(info.value)
        assert not isinstance(info.value, SchemaVersionError)
    result = CliRunner().invoke(cli, ["db", "upgrade", "--db", str(path)])
    assert result.exit_code != 0 and expected in result.output
    assert _listing(tmp_path) == before


def test_corrupt_file_with_sqlite_header_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a readable SQLite database"):
        Store(f"sqlite:///{path}")
    assert path.read_bytes() == before


def test_empty_file_counts_as_fresh(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    with Store(str(path)) as store:
        assert store.sessions() == []
    assert current(str(path)) == head()


def test_current_does_not_create_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.db"
    assert current(f"sqlite:///{path}") is None
    result = CliRunner().invoke(cli, ["db", "current", "--db", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert '"status": "empty' in result.output
    assert not path.exists()


def test_the_revisions_read_without_alembic_match_alembics_reading() -> None:
    from alembic.script import ScriptDirectory

    from tooltray.memory.store.tables import Base
    from tooltray.memory.store.versions import chain, head_revision

    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    assert head_revision() == head() == script.get_current_head()
    assert chain() == {r.revision: r.down_revision for r in script.walk_revisions()}
    assert known_revisions() == set(chain())
    assert set(TABLES) == set(Base.metadata.tables), "update probe.TABLES to the models' tables"


def test_a_header_the_reader_cannot_follow_is_a_lookup_error() -> None:
    from tooltray.memory.store.versions import _declared

    merge = 'revision = "0009"\ndown_revision = ("0007", "0008")\n'
    with pytest.raises(LookupError, match="0009_merge.py"):
        _declared(merge, "0009_merge.py")
    assert _declared('revision: str = "0001"\ndown_revision: str | None = None\n', "x") == (
        "0001",
        None,
    )


def test_0005_counts_a_cached_vector_as_used_when_it_was_made(db_url: str) -> None:
    """Upgrading keeps every vector and gives it ``used_at = created_at`` (NOT NULL)."""
    _at_with_row(
        db_url,
        "0004",
        "INSERT INTO embeddings (embedder_id, content_hash, dim, vector, created_at) "
        "VALUES ('e', 'h', 1, :v, '2025-03-04 05:06:07+00:00')",
    )
    _upgrade_to(db_url, "head")
    with Store(db_url) as store, store.engine.connect() as conn:
        row = conn.execute(text("SELECT created_at, used_at FROM embeddings")).one()
        assert row[1] is not None and str(row[0]) == str(row[1])
        assert list(store.get_embeddings("e", ["h"])) == ["h"]
    columns = _downgraded(
        db_url, "0004", lambda i: {c["name"] for c in i.get_columns("embeddings")}
    )
    assert "used_at" not in columns and "created_at" in columns


def test_0006_adds_learned_searches_to_a_learned_database(db_url: str) -> None:
    """A store that learned at 0005 keeps its past requests, learns searches after the upgrade,
    and a downgrade drops only the new table."""
    from tooltray.memory.store.records import Changes, LearnedSearch, Learning

    _at_with_row(
        db_url,
        "0005",
        "INSERT INTO learn_requests (session_id, turn, tools, embedder_id, dim, vector, at)"
        " VALUES ('old', 1, '[\"ls\"]', 'e', 1, :v, '2025-03-04 05:06:07+00:00')",
    )
    assert current(db_url) == "0005"
    _upgrade_to(db_url, "head")
    with Store(db_url) as store:
        assert [r.tools for r in store.past_requests(0)[1]] == [("ls",)]
        search = LearnedSearch(("cat",), b"\x00\x00\x80\x3f", "e")
        store.apply("new", Changes(turn=1, learn=Learning(1, ("cat",), searches=(search,))))
        clock, rows = store.past_searches(0)
        assert [(r.tools, r.session_id, r.dim) for r in rows] == [(("cat",), "new", 1)]
        assert clock.newest == rows[0].id
    tables = _downgraded(db_url, "0005", lambda i: set(i.get_table_names()))
    assert "learn_searches" not in tables and "learn_requests" in tables
