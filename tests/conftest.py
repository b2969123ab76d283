"""Shared database fixtures: a fresh SQLite file, and a fresh PostgreSQL database when available.

``db_url`` runs a test once per backend. The PostgreSQL case needs ``TOOLTRAY_TEST_PG_URL``
(``eval "$(bash .ci/pg.sh)"`` starts a local server and prints it); each test gets its own
database, created through that URL and dropped afterwards. Without the variable the PostgreSQL
cases skip locally and FAIL under ``CI=true``, so CI cannot go green without PostgreSQL.
"""

from __future__ import annotations

import atexit
import compileall
import os
import shutil
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tooltray.memory.embedders.base import CachedEmbedder
from tooltray.memory.embedders.minilm import MiniLMOnnxEmbedder
from tooltray.memory.embedders.openai_compat import OpenAIEmbedder
from tooltray.memory.store import BaseStore, MemoryStore, Store

TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:  # shared helpers (cli_tree.py) import by name under importlib mode
    sys.path.append(TESTS)

PG_ENV = "TOOLTRAY_TEST_PG_URL"
# Tests see the catalog's dense scores from the first selection on (deterministic on a loaded
# machine); the background path is tested where it says so (tests/retrieval/test_background.py).
os.environ.setdefault("TOOLTRAY_EMBED_CATALOG", "wait")
# One vector file per test run, never the user's: a catalog is embedded once per run, not once
# per store (xdist workers inherit the controller's path; the controller removes it at exit).
if "TOOLTRAY_CACHE" not in os.environ:
    _run_cache = tempfile.mkdtemp(prefix="tooltray-tests-")
    os.environ["TOOLTRAY_CACHE"] = os.path.join(_run_cache, "vectors.sqlite")
    atexit.register(shutil.rmtree, _run_cache, True)


def _compile_sources() -> None:
    """Byte-compile tooltray's packages once, before any worker starts (the controller imports
    this file first). The suite starts a few hundred interpreters (gateways, crash workers, CLI
    runs, packaging checks), each importing tooltray: with ``PYTHONDONTWRITEBYTECODE`` set (as on
    the shared machine) every one of them compiled ~170 modules from source, about 0.2 s of CPU
    each. Up-to-date files are only stat'ed; the ``__pycache__`` folders are git-ignored."""
    root = Path(TESTS).parent
    for top in ("tools", "events", "memory", "migrations"):
        compileall.compile_dir(root / top, quiet=2, workers=1)


if os.environ.get("PYTEST_XDIST_WORKER") is None:
    _compile_sources()
# pytest keeps each test module's rewritten code beside it unless bytecode writing is off: with
# it on, a later run's workers skip rewriting ~170 modules (about a third of collection).
sys.dont_write_bytecode = False

HEAVY_FIRST = (
    "reliability/test_crash.py",
    "gateway/test_gateway_names_policy.py",
    "gateway/test_gateway_follow.py",
    "reliability/test_degradation.py",
    "gateway/test_gateway_resume.py",
    "reliability/test_cli_fuzz.py",
    "gateway/test_gateway_fork.py",
    "gateway/test_gateway_pins.py",
    "bench/test_llm_server.py",
    "gateway/test_gateway_hints.py",
    "bench/test_session_replay.py",
    "gateway/test_gateway_stdio.py",
    "reliability/test_concurrency.py",
    "bench/test_reprocess.py",
    "gateway/test_gateway_faults.py",
    "memory/test_demo_pieces.py",
    "test_packaging.py",
    "gateway/test_gateway_access.py",
    "lint/test_duplicates_large.py",
    "memory/test_trinket.py",
    "gateway/test_gateway_bounds.py",
    "memory/test_demo_session.py",
    "memory/test_boundary.py",
    "gateway/test_gateway_bridge.py",
    "gateway/test_gateway_unload.py",
    "reliability/test_tool_used_durable.py",
    "gateway/test_gateway_http.py",
    "agent/test_agent_restart.py",
    "store/test_concurrency.py",
    "store/test_learned.py",
    "gateway/test_gateway_release.py",
    "gateway/test_gateway_hang.py",
)
"""Test files by measured time, longest first (``--durations=0`` summed per file; the order,
not the figures, is what holds on a loaded machine): see the ordering hook below."""


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the longest files first, then the rest by test count (``--dist loadfile``).

    xdist hands out whole files in collection order; by default it orders them by test count,
    so a file of one long test (an LLM server, six gateway starts) started last and ran alone
    while the other worker idled. Longest first fills the end with short files. A file missing
    from :data:`HEAVY_FIRST` only costs balance; tests inside a file keep their order.
    """
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    files = {id(item): _in_tests(item) for item in items}
    counts = Counter(files.values())
    items.sort(key=lambda it: (rank.get(files[id(it)], len(rank)), -counts[files[id(it)]]))


def _in_tests(item: pytest.Item) -> str:
    """The item's file relative to ``tests/`` (``memory/test_trinket.py``)."""
    try:
        return item.path.relative_to(TESTS).as_posix()
    except ValueError:
        return str(item.path)


EMBEDDING_CALLS = (
    (MiniLMOnnxEmbedder, ("embed", "embed_spans", "_load")),
    (OpenAIEmbedder, ("embed",)),
    (CachedEmbedder, ("embed", "embed_spans", "embed_documents")),
)


@pytest.fixture(autouse=True)
def _no_embedder(request: pytest.FixtureRequest) -> None:
    """Under ``@pytest.mark.no_embedder`` any embedding fails the test: a rule's test (policy,
    pricing) must run on hand-made scores and token counts, not pay for the model."""
    if request.node.get_closest_marker("no_embedder") is None:
        return
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"{request.node.nodeid} is marked no_embedder but embedded")

    for cls, names in EMBEDDING_CALLS:
        for name in names:
            monkeypatch.setattr(cls, name, refuse)


def pg_admin_url() -> str:
    """The test server's URL, or skip (locally) / fail (CI) with the command that provides it."""
    url = os.environ.get(PG_ENV)
    if url:
        return url
    message = f'PostgreSQL tests need {PG_ENV}: run `eval "$(bash .ci/pg.sh)"` first'
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def fresh_pg_database(admin_url: str, template: str | None = None) -> Iterator[str]:
    """Create a database on the test server (empty, or a copy of ``template``); drop it
    (connections and all) afterwards."""
    name = f"tt_{uuid.uuid4().hex[:16]}"
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    copy = f' TEMPLATE "{template}"' if template else ""
    try:
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"{copy}'))
    except Exception as exc:
        engine.dispose()
        pytest.fail(f"cannot create a test database through {PG_ENV}={admin_url}: {exc}")
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


OPENS_A_STORE = frozenset({"make_trinket"})
"""Fixtures that open a :class:`Store` on ``db_url`` before the test body runs: their database
starts as a copy of one migrated at head (the store would migrate it at once anyway), which
costs a fraction of running every migration per test (``bench/README.md``, issue 34). The
migration tests (tests/store) take ``db_url`` alone and still migrate for real."""


@pytest.fixture(scope="session")
def sqlite_at_head(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to head, once per worker (copied, never opened by tests)."""
    path = tmp_path_factory.mktemp("at-head") / "tooltray.db"
    Store(f"sqlite:///{path}").close()
    assert not Path(f"{path}-wal").exists(), "the template must be one file"
    return path


@pytest.fixture(scope="session")
def pg_at_head() -> Iterator[str]:
    """A PostgreSQL database migrated to head, once per worker: the template of the others."""
    with fresh_pg_database(pg_admin_url()) as url:
        Store(url).close()
        yield make_url(url).database or ""


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite file URL in this test's temporary folder (the file does not exist yet)."""
    return f"sqlite:///{tmp_path / 'tooltray.db'}"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database URL (skips or fails without a server)."""
    with fresh_pg_database(pg_admin_url()) as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database URL: once on SQLite, once on PostgreSQL. Empty, unless the test also
    takes a fixture of :data:`OPENS_A_STORE` (then a copy of one at head)."""
    at_head = not OPENS_A_STORE.isdisjoint(request.fixturenames)
    if request.param == "sqlite":
        path = tmp_path / "tooltray.db"
        if at_head:
            shutil.copyfile(request.getfixturevalue("sqlite_at_head"), path)
        yield f"sqlite:///{path}"
        return
    template = request.getfixturevalue("pg_at_head") if at_head else None
    with fresh_pg_database(pg_admin_url(), template) as url:
        yield url


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseStore]:
    """Each implementation of the store protocol, fresh: in memory, SQLite, PostgreSQL."""
    if request.param == "memory":
        yield MemoryStore()
        return
    if request.param == "sqlite":
        with Store(f"sqlite:///{tmp_path / 'tooltray.db'}") as opened:
            yield opened
        return
    with fresh_pg_database(pg_admin_url()) as url, Store(url) as opened:
        yield opened
