"""What ``prepare`` would load for a message, computed without writing anything.

``tooltray explain`` answers "what would this message load, and why" on a stored session. It
asks the planner (the trinket's own selection entry point) for the plan on a copy of the
session's state, over a store view that reads (sessions, cached vectors, learned signals) and
drops every write, so the database file is left byte for byte as it was. Each candidate comes
with the retrievers' calibrated scores (BM25 and embedding z-scores), the fused score, the score
after the bundle lift, the bar this phase asks a tool to clear, and the score the plan gave
the tools it loads (a learned companion or past-request vote can load a tool whose own score
is low); a tool a prior loaded says which ("usage prior 0.42 over 30 sessions", "declared
implicit").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tooltray.tools.errors import StoreError

if TYPE_CHECKING:
    from datetime import datetime

    from numpy import float32
    from numpy.typing import NDArray

    from tooltray.memory.config import Settings
    from tooltray.memory.core.catalog import AllowedCatalog, Plan
    from tooltray.memory.core.session import SessionState
    from tooltray.memory.store.records import (
        Changes,
        HistoryEvent,
        LearnClock,
        LearnedMate,
        PastRequest,
        PruneReport,
        SessionInfo,
        SessionSnapshot,
        TurnRecord,
    )
    from tooltray.memory.store.store import Store
    from tooltray.tools.registry import ToolRegistry

SHOWN = 12  # best-scored tools listed beside the ones the plan loads


class DryStore:
    """A store view that reads through ``inner`` and keeps nothing written.

    The embedding cache is read (no re-embedding of a cached catalog) but a vector computed
    here is not stored; ``apply`` refuses, since a dry run must never change a session.
    """

    def __init__(self, inner: Store) -> None:
        self.inner = inner

    def apply(self, session_id: str, changes: Changes | Sequence[Changes]) -> SessionSnapshot:
        raise StoreError("a dry run changes no session: nothing was written")

    def reading(self) -> AbstractContextManager[None]:
        return self.inner.reading()

    def snapshot(self, session_id: str) -> SessionSnapshot | None:
        return self.inner.snapshot(session_id)

    def history(self, session_id: str, since_id: int | None = None) -> list[HistoryEvent]:
        return self.inner.history(session_id, since_id)

    def turns(self, session_id: str) -> list[TurnRecord]:
        return self.inner.turns(session_id)

    def sessions(self) -> list[SessionInfo]:
        return self.inner.sessions()

    def get_embeddings(
        self, embedder_id: str, hashes: Sequence[str]
    ) -> dict[str, NDArray[float32]]:
        return self.inner.get_embeddings(embedder_id, hashes)

    def put_embeddings(self, embedder_id: str, vectors: Mapping[str, NDArray[Any]]) -> None:
        return None

    def put_result(self, handle: str, session_id: str, turn: int, tool: str, content: str) -> None:
        return None

    def get_result(self, handle: str) -> str | None:
        return self.inner.get_result(handle)

    def learned_mates(
        self, tools: Sequence[str], min_share: float
    ) -> tuple[list[LearnedMate], LearnClock]:
        return self.inner.learned_mates(tools, min_share)

    def past_requests(self, after: int) -> tuple[LearnClock, list[PastRequest]]:
        return self.inner.past_requests(after)

    def past_searches(self, after: int) -> tuple[LearnClock, list[PastRequest]]:
        return self.inner.past_searches(after)

    def prune(self, before: datetime) -> PruneReport:
        raise StoreError("a dry run changes no session: nothing was pruned")

    def close(self) -> None:
        self.inner.close()


@dataclass(frozen=True)
class Explained:
    """One candidate of a dry run, and what selection would do with it."""

    tool: str
    bundle: str | None
    lexical_z: float | None
    dense_z: float | None
    fused: float | None
    score: float | None
    bar: float | None
    decision: str
    picked: float | None = None


def session_state(store: DryStore, session_id: str | None) -> SessionState:
    """The session as stored, as the trinket would rehydrate it (``None``: a new session)."""
    from tooltray.memory.core.decision import Marks
    from tooltray.memory.core.session import SessionState, grown_turn
    from tooltray.memory.store.records import empty_snapshot

    stored = store.snapshot(session_id) if session_id is not None else None
    session_id = session_id if session_id is not None else "new-session"
    snapshot = stored or empty_snapshot(session_id)
    return SessionState(session_id, snapshot, marks=Marks(grown_turn=grown_turn(snapshot)))


def dry_planner(registry: ToolRegistry, settings: Settings, store: DryStore) -> AllowedCatalog:
    """A planner like the trinket's (same settings, same learned signals), over ``store``."""
    from tooltray.memory.core.catalog import AllowedCatalog
    from tooltray.memory.learning.lessons import learned_signals

    narrowed = registry.narrowed(settings.allow, settings.deny or ())
    signals = learned_signals(store, narrowed.is_allowed, settings)
    return AllowedCatalog(narrowed, settings, store, signals)


def explain(
    planner: AllowedCatalog, state: SessionState, message: str
) -> tuple[str, list[Explained]]:
    """The phase (``start``: a session boundary selects; ``growth``: a later turn may append;
    ``all``: every tool fits) and the candidates, the plan's loads first."""
    initial = not state.selected
    if state.selection_mode == "all" and not initial:
        return "all", []
    plan = planner.plan(state, [message], initial=initial, fresh=1)
    if plan.mode == "all":
        return "all", [_row(planner, c.name, None, None, f"loads ({c.source})") for c in plan.loads]
    phase = "start" if initial else "growth"
    return phase, _candidates(planner, state, message, plan, phase)


def _candidates(
    planner: AllowedCatalog, state: SessionState, message: str, plan: Plan, phase: str
) -> list[Explained]:
    from tooltray.memory.retrieval.scoring import Query

    index = getattr(planner.selector(), "index")  # noqa: B009  (an IndexSelector's ToolIndex)
    query = Query(message)
    scored, _ = index.score(query, "hybrid", index.embed_query(query))
    lifted = index.bundles.lift(scored.fused)
    have = [index.position[n] for n in state.loaded_names() if n in index.position]
    line = _bar(lifted, phase, have)
    loads = {c.name: c for c in plan.loads}
    why = _priors(planner, state, message)
    order = [int(i) for i in np.argsort(-lifted, kind="stable")[:SHOWN]]
    names = list(dict.fromkeys([*loads, *(index.names[i] for i in order)]))
    rows = []
    for name in names:
        i = index.position.get(name)
        scores = None if i is None else (scored.lexical_z[i], scored.dense_z[i], scored.fused[i])
        decision = _decision(name, state, loads, None if i is None else lifted[i], line, why)
        row = _row(planner, name, scores, None if i is None else lifted[i], decision, line)
        picked = loads[name].score if name in loads else None
        rows.append(dataclasses.replace(row, picked=None if picked is None else round(picked, 3)))
    return rows


def _bar(lifted: Any, phase: str, loaded: Sequence[int]) -> float:
    """The bar of this phase on this message's scores (``retrieval/index.py``'s pick rule at a
    boundary; ``selector.py``'s growth line on a later turn, over the tools not loaded)."""
    from tooltray.memory.retrieval.index import bar
    from tooltray.memory.tuning import GROW_BAR, GROW_RATIO

    if phase == "start":
        return bar(float(np.max(lifted)))
    rest = np.delete(lifted, list(loaded)) if len(loaded) < len(lifted) else lifted
    return max(GROW_BAR, GROW_RATIO * float(np.max(rest)))


def _priors(planner: AllowedCatalog, state: SessionState, message: str) -> dict[str, str]:
    """Why a prior made a tool a candidate: its usage share over past sessions (but this one)
    where ``message`` does not find it itself, or the ``implicit`` setting."""
    from tooltray.memory.retrieval.selector import SessionSignals

    signals = SessionSignals(planner.signals, state.session_id)
    known = planner.priors_for([*state.user_texts, message], signals)
    return {name: prior.why() for name, prior in known.items()}


def _decision(
    name: str,
    state: SessionState,
    loads: Mapping[str, Any],
    score: float | None,
    line: float,
    why: Mapping[str, str],
) -> str:
    if name in loads:
        source = loads[name].source
        return f"loads ({why.get(name, source) if source in ('usage', 'implicit') else source})"
    if state.is_loaded(name):
        return "loaded already"
    if score is not None and score >= line:
        return "clears the bar, not picked (caps, ceiling or growth rules)"
    return "below the bar"


def _row(
    planner: AllowedCatalog,
    name: str,
    scores: tuple[float, float, float] | None,
    score: float | None,
    decision: str,
    line: float | None = None,
) -> Explained:
    spec = planner.registry.get(name)
    lex, dense, fused = (None, None, None) if scores is None else (float(s) for s in scores)
    final = None if score is None else round(float(score), 3)
    return Explained(
        tool=name,
        bundle=spec.bundle if spec is not None else None,
        lexical_z=None if lex is None else round(lex, 3),
        dense_z=None if dense is None else round(dense, 3),
        fused=None if fused is None else round(fused, 3),
        score=final,
        bar=None if line is None else round(line, 3),
        decision=decision,
    )
