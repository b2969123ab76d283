"""Selection's home: the stages a turn's tools go through, and the rules of the last one.

1. **candidates** and 2. **scores**: every user message scored over the catalog;
3. **decision**: what a session boundary loads (``boundary``), what a later turn appends
   (``growth``), what a ``load_tools`` query answers (``search``). Stages 1-3 are one
   replaceable :class:`Selector`; the default is
   :class:`~tooltray.memory.retrieval.selector.IndexSelector` (hybrid index, the pick rule of
   :mod:`tooltray.memory.retrieval.index`, tuned values in :mod:`tooltray.memory.tuning`). Pass
   your own as ``Planner(registry, settings, selector=factory)``, ``factory(specs, settings,
   store, progress) -> Selector``, as pydantic-ai takes a search function.
4. **reveal**: which decided tools enter the loaded set, in which order, within the caps
   (:func:`admit`, :func:`admit_growth`), and which leave when idle. Pure functions over names,
   scores and token counts, so every rule is testable without a model: CORE and pinned tools are
   always in; skill tools come next; picks are admitted by score while the tool-count cap and the
   token budget (tokens of the native schemas) allow.

When growth happens is :meth:`~tooltray.memory.core.planner.Planner.plan` (the ``growth``
setting) and, inside it, the selector's ``growth``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from tooltray.memory.retrieval.scoring import ALWAYS, Candidate
from tooltray.memory.retrieval.selector import SelectionSignals
from tooltray.memory.store.records import LoadedTool

if TYPE_CHECKING:
    from tooltray.memory.config import Settings
    from tooltray.memory.core.skills import Skill, SkillLibrary
    from tooltray.memory.embedders.base import Embedder, EmbeddingCache, Progress
    from tooltray.tools.spec import ToolSpec

CHOSEN_BY_MODEL = ("escape", "manual", "fallback")


class Selector(Protocol):
    """Stages 1-3: score the conversation's tools and decide. Raise ``EmbedderError`` when the
    embedder is down (the trinket then exposes every tool and records the outage)."""

    def boundary(self, users: Sequence[str], signals: SelectionSignals) -> list[Candidate]:
        """What a session boundary loads, best first, from the user messages (oldest first)."""
        ...

    def growth(
        self,
        users: Sequence[str],
        signals: SelectionSignals,
        loaded: Sequence[str],
        fresh: int = 1,
    ) -> list[Candidate]:
        """What a later turn appends (none of ``loaded``); ``fresh`` messages are new."""
        ...

    def search(self, query: str, exclude: Collection[str] = ()) -> list[Candidate]:
        """A ``load_tools`` answer: the query's matches, none of ``exclude``."""
        ...


@runtime_checkable
class LexicalSearch(Protocol):
    """Optional: a ``load_tools`` answer that needs no embedder (while it is down)."""

    def lexical(self, query: str, exclude: Collection[str] = ()) -> list[Candidate]: ...


@runtime_checkable
class Lessons(Protocol):
    """Optional: what learning at turn end reads from selection's own scores."""

    def request_of(self, texts: Sequence[str]) -> str:
        """Which message of a turn asked for what it used."""
        ...

    def vector_of(self, text: str) -> tuple[str, Any] | None:
        """``(embedder id, query vector)`` of one message (``None``: no embedder)."""
        ...


@runtime_checkable
class SkillRecall(Protocol):
    """Optional: skills recalled by the selector's embedder."""

    embedder: Embedder | None

    def recall_skills(self, library: SkillLibrary, goal: str) -> list[Skill]: ...


SelectorFactory = Callable[
    ["Sequence[ToolSpec]", "Settings", "EmbeddingCache | None", "Progress | None"], Selector
]
"""Builds a selector over the allowed tools (``progress(done, total)`` while it embeds them)."""


@dataclass(frozen=True)
class Caps:
    """The limits a selection must respect (CORE and pinned tools are outside them)."""

    max_tools: int
    token_budget: int


def admit(
    candidates: Iterable[Candidate],
    tokens: Mapping[str, int],
    caps: Caps,
    loaded: Sequence[LoadedTool] = (),
) -> list[Candidate]:
    """Admit candidates in order while the caps allow; loaded picks count against them.

    Tools the model chose (load_tools, an unlisted call, a fallback) do not use up the room
    selection has, so later turns can still grow. A candidate too large for the remaining token
    budget is skipped, and smaller ones after it may still enter. Duplicates and already-loaded
    names are dropped.
    """
    seen = {t.name for t in loaded}
    counted = [t for t in loaded if t.source not in ALWAYS + CHOSEN_BY_MODEL]
    count = len(counted)
    used = sum(tokens.get(t.name, 0) for t in counted)
    out: list[Candidate] = []
    for cand in candidates:
        if cand.name in seen:
            continue
        cost = tokens.get(cand.name, 0)
        if cand.source not in ALWAYS:
            if count >= caps.max_tools or used + cost > caps.token_budget:
                continue
            count += 1
            used += cost
        seen.add(cand.name)
        out.append(cand)
    return out


def admit_growth(
    candidates: Iterable[Candidate], loaded: Sequence[LoadedTool], hard_max: int
) -> list[Candidate]:
    """Admit a later turn's growth in order while the loaded set stays under ``hard_max``.

    ``max_tools`` and ``token_budget`` bound what a session boundary selects. Growth answers to
    the ceiling the model's own ``load_tools`` calls have: a session whose first selection filled
    the caps (the demo's first turn loads 24 travel, weather and calendar tools) would otherwise
    never grow, and every tool a later task needs would cost an escape, which is a model round
    trip and a prefix change, where growth costs only the prefix change.
    """
    seen = {t.name for t in loaded}
    room = hard_max - len(loaded)
    out: list[Candidate] = []
    for cand in candidates:
        if cand.name not in seen and len(out) < room:
            seen.add(cand.name)
            out.append(cand)
    return out


def order_candidates(
    core: Sequence[str], skills: Sequence[str], picks: Sequence[Candidate]
) -> list[Candidate]:
    """CORE first (as given), then skill tools, then picks by score (stable on ties)."""
    ranked = sorted(picks, key=lambda c: -(c.score or 0.0))
    return [Candidate(n, "core") for n in core] + [Candidate(n, "skill") for n in skills] + ranked


def idle_tools(loaded: Sequence[LoadedTool], turn: int, idle_turns: int) -> list[str]:
    """Tools unused for at least ``idle_turns`` turns; CORE and pinned tools never go idle."""
    out = []
    for tool in loaded:
        if tool.source in ALWAYS:
            continue
        last = tool.last_used_turn if tool.last_used_turn is not None else tool.loaded_turn
        if turn - last >= idle_turns:
            out.append(tool.name)
    return out


def expired_fallbacks(loaded: Sequence[LoadedTool], turn: int) -> tuple[list[str], list[str]]:
    """Split fallback loads at the end of ``turn`` into (used: keep, unused: drop)."""
    keep: list[str] = []
    drop: list[str] = []
    for tool in loaded:
        if tool.fallback:
            (keep if tool.last_used_turn == turn else drop).append(tool.name)
    return keep, drop
