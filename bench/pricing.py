"""What a session costs with a prompt cache: each model call priced against the one before it.

A session is the sequence of model calls an agent makes. Each call's prompt is laid out as the
providers lay it out (tool definitions in their rendered order, then the system text, then the
messages) and cut into :class:`Segment` s, each with a token count and a content identity. A
prompt cache (a provider's, or a local server's KV cache) re-uses only the longest common prefix,
so a call pays the cached-read rate for its segments up to the first one that differs from the
previous call's prompt and full price, at the cache-write rate, for every token from there on;
its output is priced too. An escape or a search is simply one more call. Nothing here knows about
tooltray: the session bench (``session.py``) and its peers (``peers.py``) build the calls.

The parameters of the two named profiles and where their values come from are documented on
:class:`Profile`; the figures they produce are in ``bench/README.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Segment:
    """One piece of a prompt: a tool definition, the system text (or a line of it), a message.

    Attributes:
        key: the content identity (a hash of the exact text sent); equal keys at the same
            position are the same bytes, so the cache holds them.
        tokens: its o200k token count (``tools/tokens.py``).
    """

    key: str
    tokens: int


@dataclass(frozen=True)
class Call:
    """One model call: the whole prompt it sends and the tokens it generates.

    Attributes:
        prompt: every segment of the request, in the order the provider lays it out.
        output_tokens: the generated tokens this call is charged for (``layout.py`` charges
            only an extra call's: an escape's or a search's).
        kind: what the call was for: ``step`` (a tool call or the answer), ``escape`` (a
            ``load_tools`` or ``fallback`` call), ``search`` (a peer's search); for counts only.
    """

    prompt: tuple[Segment, ...]
    output_tokens: int
    kind: str = "step"


@dataclass(frozen=True)
class Profile:
    """How one call is charged: a linear price of cached input, new input and output tokens.

    A call costs ``cached * cached_read + new * uncached * cache_write + output * output``.

    Attributes:
        name: ``price`` or ``latency``.
        unit: what the cost counts (input-token prices, or seconds).
        cached_read: per input token before the first changed segment. Price: 0.1, the cached
            input rate of Anthropic (cache hits 0.1x base input) and of OpenAI's recent models
            (cached input 0.1x); latency: 0, a local server's KV cache skips those tokens.
        uncached: per input token from the first changed segment on, before ``cache_write``.
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


CALL_OUTPUT_TOKENS = 50
"""Tokens one call generates: a tool call (name and JSON arguments), a search query, or a short
answer. The corpora hold no answers or arguments, so every call is given the same 50 o200k
tokens; it is also the assistant message the call leaves in the transcript."""

PRICE = Profile("price", "input-token prices", 0.1, 1.0, 1.25, 5.0)
LATENCY = Profile("latency", "seconds", 0.0, 0.001, 1.0, 1.7 / CALL_OUTPUT_TOKENS)
PROFILES = (PRICE, LATENCY)


@dataclass(frozen=True)
class Priced:
    """A priced call or session: tokens re-used, new and generated, and their cost."""

    cost: float
    cached: int
    new: int
    output: int
    calls: int

    def __add__(self, other: Priced) -> Priced:
        return Priced(
            self.cost + other.cost,
            self.cached + other.cached,
            self.new + other.new,
            self.output + other.output,
            self.calls + other.calls,
        )


NOTHING = Priced(0.0, 0, 0, 0, 0)


def common_prefix(before: Sequence[Segment], now: Sequence[Segment]) -> int:
    """How many leading segments ``now`` shares with ``before`` (the cache re-uses these)."""
    n = 0
    for a, b in zip(before, now, strict=False):
        if a.key != b.key:
            break
        n += 1
    return n


def split(before: Sequence[Segment], now: Sequence[Segment]) -> tuple[int, int]:
    """Tokens of ``now`` re-used from ``before``'s cache, and tokens it must prefill anew."""
    k = common_prefix(before, now)
    cached = sum(s.tokens for s in now[:k])
    return cached, sum(s.tokens for s in now) - cached


def price_call(before: Sequence[Segment], call: Call, profile: Profile) -> Priced:
    """One call priced against the previous call's prompt ``before`` (empty for the first)."""
    cached, new = split(before, call.prompt)
    return Priced(
        profile.charge(cached, new, call.output_tokens), cached, new, call.output_tokens, 1
    )


def price_session(calls: Iterable[Call], profile: Profile) -> Priced:
    """A whole session: every call against the one before it; the first pays for everything."""
    total, before = NOTHING, ()
    for call in calls:
        total = total + price_call(before, call, profile)
        before = call.prompt
    return total
