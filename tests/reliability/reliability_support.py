"""Shared pieces of the reliability suite: session scripts, canonical state, embedding seeding.

A *script* is the deterministic list of steps an agent session performs (prepare, meta-tool
calls, tool-used, turn-completed, ...), generated from a seed. Running a script serially gives the
reference: the canonical state after every write. The crash and concurrency tests compare what
the database holds against that reference, so "nothing lost, nothing duplicated" is an equality.
"""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tooltray.memory.store import Store
from tooltray.tools.demo import demo_core, demo_script

HERE = Path(__file__).resolve().parent
WORKER = HERE / "worker.py"
EMBEDDER_ID = "minilm-l6-v2-int8-onnx"
EXTRA_USERS = (
    "Convert 250 euros to dollars and tell me the total with a 15% tip.",
    "What's on my calendar tomorrow afternoon?",
    "Read the README in the repo and summarise it for me.",
    "Send the quarterly numbers to the finance channel.",
    "How far is it from the hotel to the conference venue on foot?",
    "Look up the phone number of my dentist.",
)
Step = dict[str, Any]
SIZES: Any = None  # set by conftest.py: CI or full sizes


def user_texts() -> list[str]:
    """The realistic user messages the scripts cycle through (demo script first)."""
    return [str(t["user"]) for t in demo_script()] + list(EXTRA_USERS)


def messages(users: list[str], turn: int) -> list[dict[str, str]]:
    """The visible conversation at ``turn``: ``turn`` user messages with replies between them."""
    out: list[dict[str, str]] = []
    for i in range(turn):
        out.append({"role": "user", "content": users[i % len(users)]})
        if i < turn - 1:
            out.append({"role": "assistant", "content": f"Done with request {i + 1}."})
    return out


def build_script(seed: int, turns: int, names: list[str], bundles: list[str]) -> list[Step]:
    """A deterministic agent session of ``turns`` turns, shaped like the agent loop.

    Every model step starts with ``prepare``; between them come meta-tool calls, tool uses,
    long results, fallbacks and malformed calls; each turn ends with ``completed``.
    """
    rng = random.Random(seed)
    core = set(demo_core())
    pool = [n for n in names if n not in core]
    loaded_by_us: list[str] = []
    steps: list[Step] = []
    for t in range(1, turns + 1):
        steps.append({"op": "prepare", "turn": t})
        if rng.random() < 0.5:
            picks = rng.sample(pool, rng.randint(1, 2))
            if rng.random() < 0.3:
                picks.append(rng.choice(bundles))
            if rng.random() < 0.2:
                picks.append(rng.choice(pool)[:-2] + "zz")
            loaded_by_us += [p for p in picks if p in pool]
            steps.append({"op": "meta", "name": "load_tools", "args": {"tools": picks}})
            steps.append({"op": "prepare", "turn": t})
        elif rng.random() < 0.2:
            query = rng.choice(user_texts())[:60]
            steps.append({"op": "meta", "name": "load_tools", "args": {"query": query}})
            steps.append({"op": "prepare", "turn": t})
        for _ in range(rng.randint(0, 2)):
            steps.append({"op": "used", "tool": rng.choice(pool + sorted(core)), "turn": t})
        if rng.random() < 0.2:
            tool = rng.choice(pool)
            body = " ".join(f"{tool}-row-{t}-{i}" for i in range(400))
            steps.append({"op": "shorten", "tool": tool, "text": body})
        if loaded_by_us and rng.random() < 0.25:
            victim = loaded_by_us.pop(rng.randrange(len(loaded_by_us)))
            steps.append({"op": "meta", "name": "unload_tools", "args": {"tools": [victim]}})
            steps.append({"op": "prepare", "turn": t})
        if rng.random() < 0.1:
            steps.append({"op": "meta", "name": "fallback", "args": {}})
            steps.append({"op": "prepare", "turn": t})
            steps.append({"op": "used", "tool": rng.choice(pool), "turn": t})
        if rng.random() < 0.1:
            bad = rng.choice([{"tools": 5}, "[[[", {"tools": [None]}, {"query": 3}])
            steps.append(
                {"op": "meta", "name": rng.choice(["load_tools", "unload_tools"]), "args": bad}
            )
        steps.append({"op": "prepare", "turn": t})
        steps.append({"op": "completed", "turn": t})
        if rng.random() < 0.05:
            steps.append({"op": "compact", "turn": t})
    return _with_turns(steps)


def _with_turns(steps: list[Step]) -> list[Step]:
    turn = 0
    for step in steps:
        turn = step.setdefault("turn", turn)
    return steps


def shared_script(worker: int, workers: int, turns: int, names: list[str]) -> list[Step]:
    """One worker's share of a session several processes drive at once.

    Each worker only ever loads, uses and unloads its own partition of the catalog (plus uses of
    one shared CORE tool), so the final state does not depend on how the workers interleave.
    """
    core = set(demo_core())
    mine = [n for i, n in enumerate(x for x in names if x not in core) if i % workers == worker]
    steps: list[Step] = []
    for t in range(1, turns + 1):
        tool = mine[t % len(mine)]
        steps.append({"op": "prepare", "turn": t})
        steps.append({"op": "meta", "name": "load_tools", "args": {"tools": [tool]}})
        steps.append({"op": "prepare", "turn": t})
        steps.append({"op": "used", "tool": tool, "turn": t})
        steps.append({"op": "used", "tool": "web_search", "turn": t})
        steps.append({"op": "used", "tool": mine[(t + 1) % len(mine)], "turn": t})
        if t >= 5:
            old = mine[(t - 5) % len(mine)]
            steps.append({"op": "meta", "name": "unload_tools", "args": {"tools": [old]}})
        steps.append({"op": "completed", "turn": t})
    return _with_turns(steps)


def _score(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def session_state(store: Store, session_id: str) -> dict[str, Any]:
    """Everything stored about a session, canonical (ids and timestamps left out)."""
    snap = store.snapshot(session_id)
    session = None
    loaded: list[Any] = []
    if snap is not None:
        session = [snap.turn, snap.status, sorted(snap.meta.items())]
        loaded = [
            [
                t.name,
                t.position,
                t.loaded_turn,
                t.last_used_turn,
                t.source,
                _score(t.score),
                t.fallback,
            ]
            for t in snap.loaded
        ]
    history = [
        [e.turn, e.kind, e.tool, e.source, _score(e.score), e.detail]
        for e in store.history(session_id)
    ]
    turns = [
        [r.turn, r.prefix_hash, r.tool_tokens, r.loaded_count, r.eager_tokens]
        for r in store.turns(session_id)
    ]
    query = "SELECT handle, turn, tool, chars FROM results WHERE session_id = :s ORDER BY handle"
    with store.engine.connect() as conn:
        results = [list(r) for r in conn.execute(text(query), {"s": session_id})]
    return {
        "session": session,
        "loaded": loaded,
        "history": history,
        "turns": turns,
        "results": results,
    }


def digest(state: dict[str, Any], core: bool = False) -> str:
    """sha256 of the canonical state; ``core`` leaves out the per-turn prompt records."""
    part = {k: v for k, v in state.items() if not (core and k == "turns")}
    return hashlib.sha256(json.dumps(part, sort_keys=True).encode()).hexdigest()[:20]


def shared_summary(state: dict[str, Any]) -> dict[str, Any]:
    """What must not depend on interleaving: loaded names, last uses, history multiset."""
    return {
        "loaded": sorted(row[0] for row in state["loaded"]),
        "last_used": sorted((row[0], row[3]) for row in state["loaded"]),
        "history": sorted(
            Counter((h[1], h[2]) for h in state["history"]).items(),
            key=lambda kv: (kv[0][0], kv[0][1] or ""),
        ),
        "positions_unique": len({row[1] for row in state["loaded"]}) == len(state["loaded"]),
    }


@dataclass
class Vectors:
    """The demo catalog's document embeddings, computed once by the real embedder."""

    path: Path

    def seed(self, url: str) -> None:
        """Put the cached vectors into the store at ``url`` (as a first run would have)."""
        data = np.load(self.path)
        with Store(url) as store:
            store.put_embeddings(EMBEDDER_ID, {k: data[k] for k in data.files})


def compute_vectors(folder: Path) -> Vectors:
    """Embed the demo catalog once (real MiniLM) through a store and save the vectors."""
    from tooltray.memory.config import Settings
    from tooltray.memory.core.catalog import AllowedCatalog
    from tooltray.tools.demo import demo_registry

    url = f"sqlite:///{folder / 'embed.db'}"
    registry = demo_registry()
    with Store(url) as store:
        AllowedCatalog(registry, Settings(db=url), store).selector()
        query = "SELECT content_hash, vector FROM embeddings WHERE embedder_id = :e"
        with store.engine.connect() as conn:
            rows = conn.execute(text(query), {"e": EMBEDDER_ID}).all()
    path = folder / "vectors.npz"
    np.savez(path, **{h: np.frombuffer(bytes(v), dtype=np.float32) for h, v in rows})
    return Vectors(path)


PG_ENV = "TOOLTRAY_TEST_PG_URL"


def pg_admin_url() -> str:
    """The test server (``eval "$(bash .ci/pg.sh)"``); skips locally and fails in CI without it."""
    import os

    import pytest

    url = os.environ.get(PG_ENV)
    if url:
        return url
    message = f'PostgreSQL tests need {PG_ENV}: run `eval "$(bash .ci/pg.sh)"` first'
    if os.environ.get("CI", "").strip().lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def pg_databases(vectors: Vectors | None = None) -> Iterator[Callable[[], str]]:
    """A factory of fresh PostgreSQL databases (seeded with ``vectors``), all dropped at exit."""
    admin = pg_admin_url()
    engine = create_engine(admin, isolation_level="AUTOCOMMIT")
    made: list[str] = []

    def fresh() -> str:
        name = f"tt_rel_{uuid.uuid4().hex[:12]}"
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        made.append(name)
        url = make_url(admin).set(database=name).render_as_string(hide_password=False)
        if vectors is not None:
            vectors.seed(url)
        else:
            Store(url).close()
        return url

    try:
        yield fresh
    finally:
        with engine.connect() as conn:
            for name in made:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()
