"""Bad databases: corrupt files, foreign SQLite files, schemas from a newer (or older) tooltray.

Hypothesis writes the file: random bytes, a SQLite header over garbage, a real tooltray database
with bytes flipped or cut short, a foreign SQLite database, ours stamped with an unknown
revision. Opening it must either refuse with a :class:`StoreError` naming the file and the fix,
leaving the file byte for byte as it was, or (for damage SQLite does not notice) work, with every
later failure again a StoreError. The trinket itself must keep the agent's turn going.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import reliability_support as rs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, text

from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.store import Store
from tooltray.memory.store.records import Changes, Load
from tooltray.tools.demo import demo_registry
from tooltray.tools.errors import SchemaVersionError, StoreError

EXAMPLES = rs.SIZES.examples if rs.SIZES is not None else 60
RUNS = settings(
    max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
HEADER = b"SQLite format 3\x00"
FIXES = ("move it aside", "restore a backup", "point --db", "upgrade tooltray", "db upgrade")
COUNTS: dict[str, int] = {}
_names = itertools.count()


def ours_bytes(folder: Path) -> bytes:
    """A small real tooltray database (schema at head, one session) as bytes."""
    path = folder / "ours.db"
    with Store(f"sqlite:///{path}") as store:
        store.apply("s", Changes(turn=1, loads=[Load("web_search", "core", 1)]))
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
    return path.read_bytes()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("baddb")


@pytest.fixture(scope="module")
def ours(folder: Path) -> bytes:
    return ours_bytes(folder)


@pytest.fixture(scope="module", autouse=True)
def _figures(figures: dict[str, Any]) -> Iterator[None]:
    yield
    if COUNTS:
        figures["bad_input_database_files"] = {
            "examples": sum(COUNTS.values()),
            "outcomes": dict(COUNTS),
        }


def flip(data: bytes, changes: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for where, value in changes:
        out[where % len(out)] = value
    return bytes(out)


def contents(ours: bytes) -> st.SearchStrategy[bytes]:
    pages = len(ours) // 4096
    return st.one_of(
        st.binary(max_size=4096),
        st.binary(max_size=4096).map(lambda b: HEADER + b),
        st.lists(
            st.tuples(st.integers(0, len(ours) - 1), st.integers(0, 255)), min_size=1, max_size=40
        ).map(lambda c: flip(ours, c)),
        st.lists(st.tuples(st.integers(0, 99), st.integers(0, 255)), min_size=1, max_size=8).map(
            lambda c: flip(ours, c)
        ),
        st.integers(0, len(ours) - 1).map(lambda n: ours[:n]),
        st.integers(1, max(1, pages)).map(lambda p: ours[: p * 4096] + b"\x00" * 4096),
    )


def write(folder: Path, data: bytes) -> Path:
    path = folder / f"db{next(_names)}.db"
    path.write_bytes(data)
    return path


def check_refusal(exc: StoreError, path: Path) -> None:
    message = str(exc)
    assert "\n" not in message.strip()
    assert str(path) in message or "database" in message
    assert any(fix in message for fix in FIXES), message


def use(url: str) -> None:
    """What the trinket does with an open store: read, write, read history."""
    with Store(url) as store:
        store.snapshot("s")
        store.apply("s", Changes(turn=2, loads=[Load("math_evaluate", "core", 2)]))
        store.history("s")
        store.turns("s")


@RUNS
@given(data=st.data())
def test_damaged_files_are_refused_clearly_and_left_alone(
    folder: Path, ours: bytes, data: st.DataObject
) -> None:
    content = data.draw(contents(ours))
    path = write(folder, content)
    url = f"sqlite:///{path}"
    try:
        Store(url).close()
    except StoreError as exc:
        check_refusal(exc, path)
        assert path.read_bytes() == content, "a refused file was modified"
        assert not Path(f"{path}-wal").exists()
        COUNTS["refused on open"] = COUNTS.get("refused on open", 0) + 1
        return
    try:
        use(url)
        COUNTS["damage not visible to SQLite"] = COUNTS.get("damage not visible to SQLite", 0) + 1
    except StoreError as exc:
        assert str(exc).strip()
        COUNTS["refused on use"] = COUNTS.get("refused on use", 0) + 1
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)


identifiers = st.text(
    st.sampled_from("abcdefghijklmnopqrstuvwxyz_"), min_size=1, max_size=12
).filter(
    lambda name: not name.startswith("sqlite_")  # reserved by SQLite itself
)


@RUNS
@given(tables=st.lists(identifiers, min_size=1, max_size=6, unique=True))
def test_foreign_sqlite_files_are_refused_and_left_alone(folder: Path, tables: list[str]) -> None:
    path = folder / f"foreign{next(_names)}.db"
    with sqlite3.connect(path) as conn:
        for table in tables:
            conn.execute(f'CREATE TABLE "{table}" (x)')
            conn.execute(f'INSERT INTO "{table}" VALUES (1)')
    conn.close()
    content = path.read_bytes()
    if set(tables) <= {"alembic_version"}:
        return
    with pytest.raises(StoreError) as info:
        Store(f"sqlite:///{path}")
    check_refusal(info.value, path)
    assert "not a tooltray database" in str(info.value)
    assert path.read_bytes() == content and not Path(f"{path}-wal").exists()
    COUNTS["foreign refused"] = COUNTS.get("foreign refused", 0) + 1


@RUNS
@given(revision=st.text(st.sampled_from("0123456789abcdef"), min_size=1, max_size=12))
def test_schemas_from_another_tooltray_are_refused_with_the_upgrade_to_run(
    folder: Path, ours: bytes, revision: str
) -> None:
    path = write(folder, ours)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE alembic_version SET version_num = ?", (revision,))
    conn.close()
    content = path.read_bytes()
    url = f"sqlite:///{path}"
    if revision == "0002":
        Store(url).close()
        return
    with pytest.raises(SchemaVersionError) as info:
        Store(url)
    message = str(info.value)
    if revision == "0001":
        assert "tooltray db upgrade" in message
    else:
        assert "newer tooltray" in message and "upgrade tooltray" in message
    assert path.read_bytes() == content
    COUNTS["other schema refused"] = COUNTS.get("other schema refused", 0) + 1


@pytest.mark.postgres
def test_postgres_newer_and_foreign_databases_are_refused() -> None:
    with rs.pg_databases() as fresh:
        newer, foreign = fresh(), fresh()
        engine = create_engine(newer)
        with engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = 'ffff'"))
            before = conn.execute(text("SELECT count(*) FROM sessions")).scalar()
        engine.dispose()
        with pytest.raises(SchemaVersionError, match="newer tooltray.*upgrade tooltray"):
            Store(newer)
        engine = create_engine(foreign)
        with engine.begin() as conn:
            conn.execute(text("DROP TABLE sessions CASCADE"))
            conn.execute(text("CREATE TABLE invoices (id int)"))
        engine.dispose()
        with pytest.raises(StoreError, match="not a tooltray database.*point --db"):
            Store(foreign)
        engine = create_engine(newer)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM sessions")).scalar() == before
        engine.dispose()


def test_a_corrupt_database_does_not_stop_the_agent(tmp_path: Path, caplog: Any) -> None:
    """A trinket pointed at a corrupt file (``Settings(db=...)``) must keep the agent's turn
    going (all tools, logged loudly) and leave the file alone, instead of raising at start-up."""
    path = tmp_path / "tooltray.db"
    path.write_bytes(HEADER + b"\x13" * 5000)
    content = path.read_bytes()
    trinket = ToolLoaderTrinket(demo_registry(), settings=Settings(db=f"sqlite:///{path}"))
    try:
        view = trinket.prepare("s", [{"role": "user", "content": "book me a flight"}])
        assert view.specs and view.mode == "degraded"
    finally:
        trinket.close()
    assert path.read_bytes() == content


def test_another_alembic_apps_database_is_called_foreign_not_newer(tmp_path: Path) -> None:
    """A web app's database managed by Alembic, with its own ``sessions`` table, is not a
    database "written by a newer tooltray": telling the user to upgrade tooltray is wrong."""
    path = tmp_path / "webapp.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)")
        conn.execute("INSERT INTO alembic_version VALUES ('3f2a9c1b7d4e')")
        conn.execute("CREATE TABLE sessions (id TEXT, user_id INTEGER, data BLOB)")
        conn.execute("CREATE TABLE users (id INTEGER)")
    conn.close()
    content = path.read_bytes()
    with pytest.raises(StoreError) as info:
        Store(f"sqlite:///{path}")
    assert "not a tooltray database" in str(info.value), str(info.value)
    assert path.read_bytes() == content
