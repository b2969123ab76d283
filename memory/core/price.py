"""What a session costs with a prompt cache, and the opening it prices: one owner for both.

A prompt cache (a provider's, or a local server's KV cache) re-uses only the longest common
prefix of two requests. A tool in the prefix is therefore paid in full once (written to the
cache) and at the cached rate on every later call of the session; a missing tool costs an extra
round trip (an escape): the whole context read again at the cached rate, the answer written, one
call's output. :func:`held_picks` weighs the two for each pick, and :func:`eager_wins`
weighs loading every tool against the selection, so a session boundary is one priced decision.
The bench prices whole replayed sessions with the same :class:`Profile` (``bench/pricing.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
