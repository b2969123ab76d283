"""Selection for a session: its stages and rules, what a pick is worth (price), when tools leave
(lifecycle), and the planner that runs them.

Selection's home: the stages a turn's tools go through, and the rules of the last one.

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

What a session costs with a prompt cache, and the opening it prices: one owner for both.

A prompt cache (a provider's, or a local server's KV cache) re-uses only the longest common
prefix of two requests. A tool in the prefix is therefore paid in full once (written to the
cache) and at the cached rate on every later call of the session; a missing tool costs an extra
round trip (an escape): the whole context read again at the cached rate, the answer written, one
call's output. :func:`held_picks` weighs the two for each pick, and :func:`eager_wins`
weighs loading every tool against the selection, so a session boundary is one priced decision.
The bench prices whole replayed sessions with the same :class:`Profile` (``bench/pricing.py``).

The two moments a loaded set shrinks on its own: a fallback expires, idle tools are evicted.

A fallback lasts one turn: at its end, the tools the model used stay (as escapes) and the rest
go. Idle tools leave only at session boundaries (start, resume, context compaction), never
mid-session, so the prompt prefix stays byte-stable between them. Each returns the changes to
commit and hands what left to ``announce``, which the journal fires once the change is stored
(a ``tools-unloaded`` receiver must not still find the tools).

The planner: runs selection's stages (above) for a session, behind the activation
bar (while every allowed tool fits, it loads them all).

It owns everything that depends on the catalog as a whole (the selector and its index, the skill
library, per-tool token counts, the bundle menu, the eager cost) and rebuilds it only when the
allowed set changes, so a turn costs one query embedding and a few vector operations.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from blinker import NamedSignal
from pydantic import BaseModel

from tooltray.events import payloads as p
from tooltray.events import signals as sig
from tooltray.memory.config import Settings
from tooltray.memory.core.prompt import bundle_menu, defers, text_block
from tooltray.memory.core.session import MODE_ALL, MODE_SELECTED, SessionState
from tooltray.memory.core.skills import SkillLibrary, load_skills
from tooltray.memory.embedders.base import Progress
from tooltray.memory.metatools.meta_tools import shown_meta_specs
from tooltray.memory.retrieval.scoring import ALWAYS, Candidate
from tooltray.memory.retrieval.selector import (
    NoSignals,
    SelectionSignals,
    SessionNeeds,
    SessionSignals,
    build_selector,
    lexical_selector,
)
from tooltray.memory.store.records import Changes, Load, LoadedTool, SelectionMode, Unload
from tooltray.memory.tuning import (
    ESCAPE_ANSWER,
    ESCAPE_CONTEXT,
    ESCAPES_BASE,
    EXPECTED_CALLS,
    GROWTH_MISS,
    LATER_NEEDS,
    NEEDS_PRIOR_SESSIONS,
    needed,
)
from tooltray.tools.errors import TooltrayError
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import (
    block_tokens,
    bundle_spans,
    count_tokens,
    state_once,
    tokens_per_tool,
)
from tooltray.tools.spec import ToolSpec

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
class TaskCount(Protocol):
    """Optional: how many tasks the conversation's latest message states (a session's needs)."""

    def tasks(self, users: Sequence[str]) -> int: ...


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


CALL_OUTPUT_TOKENS = 50
"""Tokens one call generates: a tool call (name and JSON arguments), a search query, or a short
answer. The corpora hold no answers or arguments, so every call is given the same 50 o200k
tokens."""


@dataclass(frozen=True)
class Profile:
    """How one call is charged: a linear price of cached input, new input and output tokens.

    A call costs ``cached * cached_read + new * uncached * cache_write + output * output``.

    Attributes:
        name: ``price`` or ``latency``.
        unit: what the cost counts (input-token prices, or seconds).
        cached_read: per input token before the first changed part. Price: 0.1, the cached
            input rate of Anthropic (cache hits 0.1x base input) and of OpenAI's recent models
            (cached input 0.1x); latency: 0, a local server's KV cache skips those tokens.
        uncached: per input token from the first changed part on, before ``cache_write``.
            Price: 1.0 (the unit is one uncached input token); latency: 0.001 s, prefill at
            about 1,000 tokens/s on a local server (issue 26's figure).
        cache_write: the multiplier on those new tokens for writing them to the cache. Price:
            1.25, Anthropic's 5-minute cache write (OpenAI writes at 1.0, so this is the
            dearer provider); latency: 1.0 (writing the KV cache is the prefill itself).
        output: per generated token. Price: 5.0, output at about 5x input (Claude Sonnet
            3/15 USD, GPT-4.1 2/8 per million tokens; 4-5x); latency: 1.7 s / 50 tokens, so one
            round trip of :data:`CALL_OUTPUT_TOKENS` decodes in about 1.7 s (issue 26's figure
            for a small local model).
    """

    name: str
    unit: str
    cached_read: float
    uncached: float
    cache_write: float
    output: float

    def charge(self, cached: int, new: int, output: int) -> float:
        """The cost of one call with ``cached`` re-used, ``new`` input and ``output`` tokens."""
        return (
            cached * self.cached_read
            + new * self.uncached * self.cache_write
            + output * self.output
        )

    def held(self, tokens: int, calls: int) -> float:
        """``tokens`` kept in the prefix over ``calls`` model calls: written once, then cached."""
        return self.charge(tokens * max(calls - 1, 0), tokens, 0)

    def escape(self, context: int, answer: int) -> float:
        """One extra round trip over a ``context``-token prompt answered in ``answer`` tokens."""
        return self.charge(context, answer, CALL_OUTPUT_TOKENS)


PRICE = Profile("price", "input-token prices", 0.1, 1.0, 1.25, 5.0)
LATENCY = Profile("latency", "seconds", 0.0, 0.001, 1.0, 1.7 / CALL_OUTPUT_TOKENS)
PROFILES = (PRICE, LATENCY)


def profile_named(name: str) -> Profile:
    """The profile called ``name`` (``price`` or ``latency``)."""
    return next(p for p in PROFILES if p.name == name)


@dataclass(frozen=True)
class Session:
    """What a boundary expects of the session ahead (tuned in :mod:`tooltray.memory.tuning`).

    Attributes:
        calls: model calls still to come in the session.
        context: tokens of the prompt an escape re-reads (prefix and conversation).
        answer: tokens of an escape's answer (the revealed tools' listing).
    """

    calls: int
    context: int
    answer: int


def held_picks(
    picks: Sequence[tuple[int, float]], profile: Profile, session: Session
) -> list[bool]:
    """Which picks go in the prefix: each whose expected saved escape (its chance of being
    needed times an escape's cost) outweighs holding its tokens over the session.

    ``picks`` holds ``(tokens, chance of being needed)``; each is judged on its own, so a large
    unlikely tool stays out while smaller or likelier ones after it still enter.
    """
    miss = profile.escape(session.context, session.answer)
    return [chance * miss >= profile.held(tokens, session.calls) for tokens, chance in picks]


def eager_wins(
    eager: int, selected: int, misses: float, profile: Profile, session: Session
) -> bool:
    """Whether every tool in the prefix costs no more than the selection: its ``selected``
    tokens (the fixed part, CORE and the opening) plus ``misses`` expected escapes."""
    cost = profile.held(selected, session.calls) + misses * profile.escape(
        session.context, session.answer
    )
    return profile.held(eager, session.calls) <= cost


Announce = Callable[[NamedSignal, str, BaseModel], None]


def expire_fallback(state: SessionState, turn: int, announce: Announce) -> Changes:
    """End the session's fallback: used tools stay as escapes, the others are unloaded."""
    keep, drop = expired_fallbacks(state.snapshot.loaded, state.fallback_turn or turn)
    state.fallback_turn = None
    changes = Changes(
        loads=[Load(n, "escape", turn) for n in keep], unloads=[Unload(n) for n in drop]
    )
    if drop:
        gone = p.ToolsUnloaded(turn=turn, tools=drop, reason="fallback-expired")
        announce(sig.tools_unloaded, state.session_id, gone)
    return changes


def evict(state: SessionState, turn: int, idle_turns: int, announce: Announce) -> Changes:
    """Unload the tools idle for ``idle_turns`` (call only at a session boundary)."""
    gone = idle_tools(state.snapshot.loaded, turn, idle_turns)
    if gone:
        evicted = p.ToolsUnloaded(turn=turn, tools=gone, reason="evicted")
        announce(sig.tools_unloaded, state.session_id, evicted)
    return Changes(unloads=[Unload(n, "evicted") for n in gone])


@dataclass
class Plan:
    """What to append to the loaded set, and the session's mode (``selected`` or ``all``)."""

    mode: SelectionMode
    loads: list[Candidate] = field(default_factory=list)


EXPECTED = Session(EXPECTED_CALLS, ESCAPE_CONTEXT, ESCAPE_ANSWER)
"""The session a boundary prices its picks over (the tuned expectations)."""


@dataclass
class _Opening:
    """A boundary's opening: the picks held in the prefix, their tokens, the summed chance of
    the left-out ones being needed (the escapes they are expected to cost), and of the held."""

    held: list[Candidate]
    tokens: int
    missed: float
    kept: float = 0.0


@dataclass
class _Catalog:
    key: Any
    tokens: dict[str, int]
    eager_tokens: int
    menu: str
    fixed: int
    selector: Selector | None = None
    skills: SkillLibrary | None = None
    lexical: LexicalSearch | None = None
    spans: dict[str, list[str]] = field(default_factory=dict)
    unbuilt: bool = False
    #: tokens each tool adds on the session's own path (a text line on the text path): what the
    #: boundary prices, in the unit of ``eager_tokens``; ``tokens`` (native schemas) are what
    #: the caps count
    priced: dict[str, int] = field(default_factory=dict)


class Planner:
    """Decides picks for a session from its user messages; caches per allowed catalog.

    Args:
        registry: the tools; only allowed ones are ever proposed.
        settings: caps, growth policy, activation threshold, embedder and skills folder.
        store: where tool-doc embeddings are cached (``None``: in memory only); the trinket
            passes its journal, so a call's vectors go in the call's one transaction.
        signals: what was learned from past sessions (default: nothing, a cold start).
        selector: builds stages 1-3 of selection over the allowed tools (default: the hybrid
            index, :func:`~tooltray.memory.retrieval.selector.build_selector`).
    """

    def __init__(
        self,
        registry: ToolRegistry,
        settings: Settings,
        store: EmbeddingCache | None = None,
        signals: SelectionSignals | None = None,
        selector: SelectorFactory = build_selector,
    ):
        self.registry = registry
        self.build_selector = selector
        self.settings = settings
        self.store = store
        self.signals: SelectionSignals = signals if signals is not None else NoSignals()
        self._catalog: _Catalog | None = None

    def catalog(self) -> _Catalog:
        """Token counts, menu and eager cost of the allowed catalog (rebuilt when it changes)."""
        key = (self.registry.fingerprint, self.settings.path, self.settings.reveal)
        if self._catalog is None or self._catalog.key != key:
            specs = self.registry.allowed()
            spans = bundle_spans(specs) if self.settings.boilerplate_once else {}
            specs = state_once(specs, spans)
            path = self.settings.path if self.settings.path != "text" else "openai"
            tokens = tokens_per_tool(specs, path)
            priced = tokens_per_tool(specs, self.settings.path)
            eager = self._eager(specs)
            menu = bundle_menu(self.registry.bundles())
            fixed = self._fixed(menu)
            self._catalog = _Catalog(key, tokens, eager, menu, fixed, spans=spans, priced=priced)
        return self._catalog

    def shown(self, specs: Sequence[ToolSpec]) -> list[ToolSpec]:
        """``specs`` as the model sees them: with ``boilerplate_once``, each bundle's shared
        span stays on its first tool in ``specs`` and is cut from the others."""
        return state_once(specs, self.catalog().spans)

    def _fixed(self, menu: str) -> int:
        """Tokens selection shows whatever it picks: the meta-tools the view leads with (the
        ``call_tool`` bridge when revealing by appending, unless the provider defers tools)
        and the bundle menu."""
        deferring = defers(self.settings.path, self.settings.reveal, {})
        return self._eager(shown_meta_specs(self.settings.reveal, deferring)) + count_tokens(menu).n

    def _eager(self, specs: Sequence[Any]) -> int:
        if self.settings.path == "text":
            return count_tokens(text_block(specs)).n
        return block_tokens(specs, self.settings.path)

    def menu(self) -> str:
        """The bundle menu for the stable prefix."""
        return self.catalog().menu

    def eager_tokens(self) -> int:
        """Tokens of the tool part had every allowed tool been exposed."""
        return self.catalog().eager_tokens

    def selector(self, progress: Progress | None = None) -> Selector:
        """Stages 1-3 over the allowed tools (built once per catalog).

        Args:
            progress: called as ``progress(done, total)`` while the catalog is embedded.
        """
        cat = self.catalog()
        if cat.selector is None:
            specs = self.registry.allowed()  # whole descriptions: cutting spans cost C@10 1.8
            cat.selector = self.build_selector(specs, self.settings, self.store, progress)
        return cat.selector

    def skills(self) -> SkillLibrary | None:
        """The skill library, or ``None`` when no skills folder is configured."""
        cat = self.catalog()
        if cat.skills is None and self.settings.skills_dir is not None:
            skills = load_skills(self.settings.skills_dir)
            selector = self.selector()
            embedder = selector.embedder if isinstance(selector, SkillRecall) else None
            cat.skills = SkillLibrary(skills, embedder) if skills and embedder is not None else None
        return cat.skills

    def all_fit(self) -> bool:
        """True while every allowed tool fits under the activation share of the window."""
        budget = self.settings.activation_share * self.settings.context_window
        return sum(self.catalog().tokens.values()) <= budget

    def search(self, query: str, exclude: Collection[str] = ()) -> list[Candidate]:
        """Tools for a ``load_tools`` query: the strongest matches and their bundle-mates, none
        of ``exclude`` (the tools already loaded).

        Raises:
            EmbedderError: the embedder is down (:meth:`search_lexically` still answers).
        """
        return self.selector().search(query, exclude)

    def search_lexically(self, query: str, exclude: Collection[str] = ()) -> list[Candidate]:
        """:meth:`search` by the lexical half alone, which needs no embedder.

        A ``load_tools`` query must get an answer while the embedder is down, even when the
        selector could not be built at all (its catalog embedding failed).
        """
        cat = self.catalog()
        if isinstance(cat.selector, LexicalSearch):
            return cat.selector.lexical(query, exclude)
        if cat.lexical is None:
            cat.lexical = lexical_selector(self.registry.allowed(), self.settings)
        return cat.lexical.lexical(query, exclude)

    def message_vector(self, text: str) -> tuple[str, Any] | None:
        """``(embedder id, query vector)`` of one user message, for learning at turn end.

        A process that resumed the session after its selection builds the selector here (the
        catalog's vectors are cached in the store), so a restart does not lose the lesson's
        vector. ``None`` when every tool fits (no index is needed) or the embedder is down.
        """
        lessons = self._lessons()
        return lessons.vector_of(text) if lessons is not None else None

    def _lessons(self) -> Lessons | None:
        """The selector as learning reads it, built if this process has none yet (a resumed
        session); ``None`` when every tool fits, the embedder is down or it teaches nothing."""
        cat = self.catalog()
        if cat.selector is None and (cat.unbuilt or self.all_fit()):
            return None
        try:
            selector = self.selector()
        except TooltrayError:
            cat.unbuilt = True  # one try per catalog: a turn's end must not wait on an outage
            return None
        return selector if isinstance(selector, Lessons) else None

    def request_text(self, users: Sequence[str]) -> str | None:
        """Which of a turn's user messages asked for what it used: the first task message.

        After "add a reminder", "user1", "my password is x" the call follows the credentials, but
        the request is the first message; storing its vector lets a later "set a reminder" find
        this turn. A follow-up (matching nothing strongly) is never the request while a task
        message exists. Without a retrieval index, the latest message.
        """
        texts = [u for u in users if u and u.strip()]
        lessons = self._lessons() if texts else None
        if not texts or lessons is None:
            return texts[-1] if texts else None
        return lessons.request_of(texts)

    def plan(
        self, state: SessionState, users: Sequence[str], *, initial: bool, fresh: int = 1
    ) -> Plan:
        """Initial selection (start/resume) or growth (later turns, append-only); ``fresh``
        counts the user messages since the last growth."""
        fits = initial and self._fits()
        picks = self._picks(users, state.session_id) if initial and not fits else []
        opening = self._opening(picks)
        if initial and (fits or self._everything(opening, users)):
            names = [s.name for s in self.registry.allowed()]
            return Plan(MODE_ALL, [Candidate(n, "all") for n in names if not state.is_loaded(n)])
        if state.selection_mode == MODE_ALL and not initial:
            return Plan(MODE_ALL)
        if initial:
            cands = order_candidates(self._core(), self._skill_tools(users), opening.held)
        elif self.settings.growth == "every_turn":
            cands = self._picks(users, state.session_id)
        else:
            return Plan(MODE_SELECTED, self._growth(state, users, fresh))
        cands = [c for c in cands if self.registry.is_allowed(c.name)]
        caps = Caps(self.settings.max_tools, self.settings.token_budget)
        picks = admit(cands, self.catalog().tokens, caps, state.snapshot.loaded)
        return Plan(MODE_SELECTED, picks + self._resume_growth(state, users, fresh, picks))

    def _fits(self) -> bool:
        """Every tool loads without scoring: the ``share`` rule says so, or (``priced``) the
        whole catalog costs no more than selection's fixed part (meta-tools, bridge, menu)."""
        if self.settings.opening == "share":
            return self.all_fit()
        return self.eager_tokens() <= self.fixed_tokens()

    def _everything(self, opening: _Opening, users: Sequence[str]) -> bool:
        """The boundary's one priced decision: every tool, or the selection: its fixed part,
        CORE and the priced opening, plus the escapes it is expected to make (the left-out
        picks' chances over a floor, or what the opening holds short of the session's needs,
        whichever is more). ``opening = "share"`` keeps the activation-share rule."""
        if self.settings.opening == "share":
            return False
        held = self.fixed_tokens() + self._core_tokens() + opening.tokens
        misses = max(ESCAPES_BASE + opening.missed, self._needs(users) - opening.kept)
        return eager_wins(self.eager_tokens(), held, misses, self.profile(), EXPECTED)

    def _needs(self, users: Sequence[str]) -> float:
        """The chance mass a session spreads over the catalog: a tool for each task its message
        states (the first turn's), plus what its later turns add that growth misses
        (:meth:`_later`). A selector that cannot count tasks is taken to state one."""
        selector = self.selector()
        tasks = selector.tasks(users) if isinstance(selector, TaskCount) else 1
        return max(tasks, 1) + self._later()

    def _later(self) -> float:
        """:data:`LATER_NEEDS`, moved towards what past sessions' later turns added (their needs
        less their first turns' tools) when the signals learned it (:class:`SessionNeeds`)."""
        if not isinstance(self.signals, SessionNeeds):
            return LATER_NEEDS
        mean, n = self.signals.session_needs(GROWTH_MISS)
        first, _ = self.signals.session_needs(0.0)
        prior = NEEDS_PRIOR_SESSIONS
        return (LATER_NEEDS * prior + (mean - first) * n) / (prior + n)

    def _opening(self, picks: Sequence[Candidate]) -> _Opening:
        """The picks a boundary puts in the prefix: each one worth holding (``opening =
        "priced"``; ``share``: all of them); later turns reveal what the conversation points to."""
        if self.settings.opening == "share":
            return _Opening(list(picks), 0, 0.0)
        held, tokens, missed, kept = [], 0, 0.0, 0.0
        for cand, cost, chance, keep in self._priced(picks):
            held += [cand] if keep else []
            tokens += cost if keep else 0
            missed += 0.0 if keep else chance
            kept += chance if keep else 0.0
        return _Opening(held, tokens, missed, kept)

    def _priced(self, picks: Sequence[Candidate]) -> list[tuple[Candidate, int, float, bool]]:
        """Each pick best first, with its tokens on the session's path, its chance of being
        needed and whether that chance pays for holding it (:func:`held_picks`)."""
        tokens = self.catalog().priced
        ranked = sorted(picks, key=lambda c: -(c.score or 0.0))
        top = ranked[0].score or 0.0 if ranked else 0.0
        rows = [(tokens.get(c.name, 0), needed(c.score or 0.0, top)) for c in ranked]
        keep = held_picks(rows, self.profile(), EXPECTED)
        return [(c, t, n, k) for c, (t, n), k in zip(ranked, rows, keep, strict=True)]

    def profile(self) -> Profile:
        """The cost profile the boundary's decision minimises (``cost_profile``)."""
        return profile_named(self.settings.cost_profile)

    def fixed_tokens(self) -> int:
        """What selection always shows: the meta-tools (and the bridge) and the bundle menu."""
        return self.catalog().fixed

    def _core_tokens(self) -> int:
        tokens = self.catalog().priced
        return sum(tokens.get(n, 0) for n in self._core())

    def _growth(self, state: SessionState, users: Sequence[str], fresh: int) -> list[Candidate]:
        """A later turn's growth: the conversation's strongest tools, up to ``hard_max_tools``,
        and (revealed by appending, priced) the conversation's picks worth revealing."""
        names = [t.name for t in state.snapshot.loaded]
        signals = SessionSignals(self.signals, state.session_id)
        cands = self.selector().growth(users, signals, names, fresh)
        cands += self._worth_revealing(users, signals, set(names) | {c.name for c in cands})
        cands = [c for c in cands if self.registry.is_allowed(c.name)]
        return admit_growth(cands, state.snapshot.loaded, self.settings.hard_max_tools)

    def _worth_revealing(
        self, users: Sequence[str], signals: SessionSignals, taken: set[str]
    ) -> list[Candidate]:
        """What the conversation now points to and a reveal pays for: its picks (as a boundary
        would score them) whose expected saved escape outweighs appending them. A reveal costs
        its tokens once and cached reads after, so it is priced like holding; the prefix path
        keeps growth's own bar, since there each change re-prefills the conversation."""
        if self.settings.reveal != "append" or self.settings.opening != "priced":
            return []
        picks = self.selector().boundary(users, signals)
        return [c for c, _, _, keep in self._priced(picks) if keep and c.name not in taken]

    def _resume_growth(
        self, state: SessionState, users: Sequence[str], fresh: int, picks: Sequence[Candidate]
    ) -> list[Candidate]:
        """At the resume of a session that selected before, what growth would add this turn.

        The resumed session's earlier picks already fill the caps, so the boundary's own
        selection admits little; without this a resumed turn loaded nothing that the same turn
        uninterrupted grows (the demo played in pieces ended at 0.90 first-pass with 2 escapes,
        at once 1.00 and 0, on stores with the same history).
        """
        picked = [t for t in state.snapshot.loaded if t.source not in ("core", "pinned", "all")]
        if not picked or not users or self.settings.growth == "never":
            return []
        taken = {c.name for c in picks}
        room = self.settings.hard_max_tools - len(state.snapshot.loaded) - len(picks)
        grown = [c for c in self._growth(state, users, fresh) if c.name not in taken]
        return grown[: max(room, 0)]

    def _core(self) -> list[str]:
        pinned = [s.name for s in self.registry.allowed() if s.pinned]
        extra = [n for n in self.settings.core if self.registry.is_allowed(n)]
        return list(dict.fromkeys(pinned + extra))

    def _picks(self, users: Sequence[str], session: str) -> list[Candidate]:
        if not users:
            return []
        return self.selector().boundary(users, SessionSignals(self.signals, session))

    def _skill_tools(self, users: Sequence[str]) -> list[str]:
        library = self.skills()
        selector = self.selector() if library is not None and users else None
        if library is None or not isinstance(selector, SkillRecall):
            return []
        goal = users[-1]
        names: list[str] = []
        for skill in selector.recall_skills(library, goal):
            names += [n for n in skill.tools_required if self.registry.is_allowed(n)]
        return list(dict.fromkeys(names))
