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
:class:`tooltray.memory.core.catalog.Profile` (the library prices its session boundary with the same
profiles); the figures they produce are in ``bench/README.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tooltray.memory.core.policy import (  # the library's own profiles: one owner
    CALL_OUTPUT_TOKENS as CALL_OUTPUT_TOKENS,
)
from tooltray.memory.core.policy import LATENCY as LATENCY
from tooltray.memory.core.policy import PRICE as PRICE
from tooltray.memory.core.policy import PROFILES as PROFILES
from tooltray.memory.core.policy import Profile as Profile


@dataclass(frozen=True)
class Segment:
    """One piece of a prompt: a tool definition, the system text (or a line of it), a message.

    Attributes:
        key: the content identity (a hash of the exact text sent); equal keys at the same
            position are the same bytes, so the cache holds them.
        tokens: its o200k token count (``tools/render.py``).
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
    total, before = NOTHING, tuple[Segment, ...]()
    for call in calls:
        total = total + price_call(before, call, profile)
        before = call.prompt
    return total
