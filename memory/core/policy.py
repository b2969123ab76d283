"""Selection's decision rules as pure functions: which picks a boundary holds, what a later turn
may append, what a session costs, when tools leave. They see names, scores and token counts only
(never a store, a session id or a signal), so each rule is tested on hand-made scores.

A prompt cache re-uses only the longest common prefix of two requests, so a tool in the prefix is
paid in full once and at the cached rate after; a missing tool costs an escape (one more round
trip). :func:`held_picks` weighs the two per pick and :func:`eager_wins` every tool against the
selection: a session boundary is one priced decision. The bench prices whole replayed sessions
with the same :class:`Profile` (``bench/pricing.py``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from tooltray.memory.retrieval.scoring import ALWAYS, Candidate
from tooltray.memory.tuning import (
    DIRECTORY_CHANCE,
    ESCAPE_ANSWER,
    ESCAPE_CONTEXT,
    ESCAPES_BASE,
    EXPECTED_CALLS,
    LATER_NEEDS,
    NEEDS_PRIOR_SESSIONS,
    needed,
)


class Held(Protocol):
    """A loaded tool as the rules read it (the store's ``LoadedTool`` is one)."""

    @property
    def name(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def loaded_turn(self) -> int: ...
    @property
    def last_used_turn(self) -> int | None: ...
    @property
    def fallback(self) -> bool: ...


CHOSEN_BY_MODEL = ("escape", "manual", "fallback")


@dataclass(frozen=True)
class Caps:
    """The limits a selection must respect (CORE and pinned tools are outside them)."""

    max_tools: int
    token_budget: int


def admit(
    candidates: Iterable[Candidate],
    tokens: Mapping[str, int],
    caps: Caps,
    loaded: Sequence[Held] = (),
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
    candidates: Iterable[Candidate], loaded: Sequence[Held], hard_max: int
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


def idle_tools(loaded: Sequence[Held], turn: int, idle_turns: int) -> list[str]:
    """Tools unused for at least ``idle_turns`` turns; CORE and pinned tools never go idle."""
    out = []
    for tool in loaded:
        if tool.source in ALWAYS:
            continue
        last = tool.last_used_turn if tool.last_used_turn is not None else tool.loaded_turn
        if turn - last >= idle_turns:
            out.append(tool.name)
    return out


def expired_fallbacks(loaded: Sequence[Held], turn: int) -> tuple[list[str], list[str]]:
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


EXPECTED = Session(EXPECTED_CALLS, ESCAPE_CONTEXT, ESCAPE_ANSWER)
"""The session a boundary prices its picks over (the tuned expectations)."""


@dataclass
class Opening:
    """A boundary's opening: the picks held in the prefix, their tokens, the summed chance of
    the left-out ones being needed (the escapes they are expected to cost), and of the held."""

    held: list[Candidate]
    tokens: int
    missed: float
    kept: float = 0.0


Priced = tuple[Candidate, int, float, bool]
"""A pick, its tokens, its chance of being needed, and whether that chance pays for holding it."""


def priced(
    picks: Sequence[Candidate], tokens: Mapping[str, int], profile: Profile, size: int = 0
) -> list[Priced]:
    """Each pick best first, with its tokens, its chance of being needed (its score against the
    best one, on a catalog of ``size`` tools, or its ``chance`` when larger) and whether that
    chance pays for holding it (:func:`held_picks`)."""
    ranked = sorted(picks, key=lambda c: -(c.score or 0.0))
    top = ranked[0].score or 0.0 if ranked else 0.0
    rows = [
        (tokens.get(c.name, 0), max(needed(c.score or 0.0, top, size), c.chance or 0.0))
        for c in ranked
    ]
    keep = held_picks(rows, profile, EXPECTED)
    return [(c, t, n, k) for c, (t, n), k in zip(ranked, rows, keep, strict=True)]


def opening(
    picks: Sequence[Candidate],
    tokens: Mapping[str, int],
    profile: Profile,
    *,
    share: bool,
    size: int = 0,
) -> Opening:
    """The picks a boundary puts in the prefix: each one worth holding on a catalog of ``size``
    tools (``share``: all)."""
    if share:
        return Opening(list(picks), 0, 0.0)
    held, total, missed, kept = [], 0, 0.0, 0.0
    for cand, cost, chance, keep in priced(picks, tokens, profile, size):
        held += [cand] if keep else []
        total += cost if keep else 0
        missed += 0.0 if keep else chance
        kept += chance if keep else 0.0
    return Opening(held, total, missed, kept)


def everything(eager: int, held: int, opened: Opening, needs: float, profile: Profile) -> bool:
    """Every tool rather than the selection (its ``held`` tokens, plus the escapes it is
    expected to make: the left-out picks' chances over a floor, or what the opening holds short
    of the session's ``needs``, whichever is more)."""
    misses = max(ESCAPES_BASE + opened.missed, needs - opened.kept)
    return eager_wins(eager, held, misses, profile, EXPECTED)


def later_needs(mean: float, first: float, sessions: int) -> float:
    """:data:`LATER_NEEDS`, moved towards what ``sessions`` past sessions' later turns added
    (their ``mean`` needs less their ``first`` turns' tools)."""
    prior = NEEDS_PRIOR_SESSIONS
    return (LATER_NEEDS * prior + (mean - first) * sessions) / (prior + sessions)


def lists_everything(listing: int, directory: int, profile: Profile) -> bool:
    """Whether the fallback reveals every tool's listing rather than a names directory.

    The listing (``listing`` tokens) makes every tool callable at once and stays in the
    conversation for the rest of the session. The directory (``directory`` tokens: the names by
    bundle) makes nothing callable: the model loads what it needs by name, one more round trip
    that answers with a few tools' listing. On a large catalog the listing outweighs that trip.
    """
    by_name = profile.held(directory, EXPECTED.calls) + profile.escape(
        EXPECTED.context, EXPECTED.answer
    )
    return profile.held(listing, EXPECTED.calls) <= by_name


def menu_pays(menu: int, hint: int, directory: Listed, profile: Profile) -> bool:
    """Whether the bundle menu (``menu`` tokens) belongs in the prefix, rather than a ``hint``
    of how to list the bundles, with the bundles' directory as the answer to
    ``load_tools(["*"])`` (:func:`menu_price` of each; a tie keeps the menu)."""
    absent = Listed(directory.tokens, directory.tokens, 1.0)
    return menu_price(menu, directory, profile) <= menu_price(hint, absent, profile)


def menu_price(menu: int, directory: Listed, profile: Profile) -> float:
    """What a prefix line of ``menu`` tokens costs a session, with the trips it leaves.

    The menu is paid on every call of every session; a session that needs to name a bundle
    (:data:`DIRECTORY_CHANCE`) the menu does not name (``directory.unnamed`` of those needs)
    pays one more round trip and the directory of the rest (``directory.rest`` tokens), which
    then stays in its conversation. A few bundles' short menu costs less than that chance of
    a trip; seventy servers' menu more; a hint naming none pays the trip on every such need.
    """
    trip = profile.escape(EXPECTED.context, 0)
    rest = profile.held(directory.rest, EXPECTED.calls) + trip
    return profile.held(menu, EXPECTED.calls) + DIRECTORY_CHANCE * directory.unnamed * rest


def unnamed(
    named: Collection[str], sizes: Mapping[str, int], uses: Mapping[str, float], novel: float
) -> float:
    """The share of the needs to name a bundle that fall outside ``named`` (bundle ->
    members in ``sizes``). Without a record (``uses`` empty) a need is as likely on any tool:
    the tool share left out. With one, needs like the past ones fall as the record's uses
    (bundle -> decayed sessions) did, and the ``novel`` share (sessions that needed a server no
    other past one used) as a need without a record would, on the servers the record lacks."""
    fresh = {b: n for b, n in sizes.items() if b not in uses}
    if not uses:
        return _left_out(named, sizes)
    missed = sum(n for b, n in uses.items() if b not in named) / max(sum(uses.values()), 1e-9)
    return (1.0 - novel) * missed + novel * _left_out(named, fresh)


def _left_out(named: Collection[str], sizes: Mapping[str, int]) -> float:
    """The share of the members of ``sizes``'s bundles in those ``named`` leaves out."""
    return sum(n for b, n in sizes.items() if b not in named) / max(sum(sizes.values()), 1)


@dataclass(frozen=True)
class Listed:
    """The bundles' directory as a menu decision prices it: its ``tokens`` listing them all;
    the ``rest`` listing those the menu leaves out, and the share of tools in those
    (``unnamed``): where a need falls that the menu does not answer."""

    tokens: int
    rest: int = 0
    unnamed: float = 0.0
