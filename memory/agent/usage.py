"""The provider's reported token usage, read from Chat Completions responses and summed per turn.

The bundled agent passes it with ``turn-completed`` so the store keeps, beside tooltray's own
estimate, what the turn was really billed: ``prompt_tokens_details.cached_tokens`` as cached
input, the rest of ``prompt_tokens`` as uncached input, ``completion_tokens`` as output. A server
that reports nothing (many local ones) leaves the turn's usage empty.
"""

from __future__ import annotations

from typing import Any

from tooltray.events.payloads import Usage


def _count(obj: Any, name: str) -> int:
    value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return value if isinstance(value, int) and value > 0 else 0


def usage_of(response: Any) -> Usage | None:
    """A Chat Completions response's ``usage`` as a :class:`Usage` (``None`` when absent)."""
    reported = getattr(response, "usage", None)
    if reported is None:
        return None
    details = getattr(reported, "prompt_tokens_details", None)
    cached = _count(details, "cached_tokens") if details is not None else 0
    prompt = _count(reported, "prompt_tokens")
    return Usage(
        cached_input_tokens=min(cached, prompt),
        uncached_input_tokens=max(prompt - cached, 0),
        output_tokens=_count(reported, "completion_tokens"),
    )


def add(total: Usage | None, more: Usage | None) -> Usage | None:
    """Two usages summed (either may be ``None``: nothing reported)."""
    if more is None or total is None:
        return total or more
    return Usage(
        cached_input_tokens=total.cached_input_tokens + more.cached_input_tokens,
        uncached_input_tokens=total.uncached_input_tokens + more.uncached_input_tokens,
        output_tokens=total.output_tokens + more.output_tokens,
    )
