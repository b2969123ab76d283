"""tooltray's estimate of each model call's prompt tokens: re-used from the previous call, and new.

A prompt cache re-uses only the longest common prefix of two requests, and providers lay a request
out as ``tools=``, the system text, then the messages. Each ``prepare`` is one model call, so the
trinket cuts the prompt it rendered into those parts and splits it at the first part that differs
from the previous call's. A turn's sums are stored on its ``turns`` row at turn end, beside what
the provider reported, so a session can be priced by SQL (``bench/pricing.py`` prices the same).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from tooltray.events.payloads import Usage
from tooltray.memory.core.prompt import NATIVE_PATHS, PromptView
from tooltray.memory.store.records import TurnUsage
from tooltray.tools.render import count_tokens, render_one

Part = tuple[str, int]
"""One part of a prompt: its exact text (its identity) and its o200k tokens."""


@lru_cache(maxsize=50_000)
def _part(text: str) -> Part:
    return text, count_tokens(text).n


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str) and len(message) <= 2:
        return f"{message.get('role')}: {content}"
    return json.dumps(message, sort_keys=True, default=str)


def tool_parts(view: PromptView) -> list[Part]:
    """``tools=`` as rendered on the view's native path, one part per tool (none on text)."""
    if view.path not in NATIVE_PATHS:
        return []
    return [_part(render_one(view.path, s)) for s in view.specs]


def split(before: Sequence[Part], now: Sequence[Part]) -> tuple[int, int]:
    """Tokens of ``now`` re-used from ``before`` (its common leading parts) and tokens new."""
    reused = total = 0
    same = True
    for k, (text, tokens) in enumerate(now):
        same = same and k < len(before) and before[k][0] == text
        reused += tokens if same else 0
        total += tokens
    return reused, total - reused


@dataclass
class PromptMeter:
    """One session's running estimate: the last call's prompt and the current turn's sums."""

    last: list[Part] = field(default_factory=list)
    reused: int = 0
    new: int = 0
    calls: int = 0
    tools: tuple[str, list[Part]] = ("", [])

    def observe(self, view: PromptView, messages: Sequence[dict[str, Any]]) -> None:
        """Count one model call's prompt against the previous one."""
        if self.tools[0] != view.prefix_hash:  # tools= changes only with the prefix hash
            self.tools = (view.prefix_hash, tool_parts(view))
        # the system message the view composes, then the conversation, one part per message
        now = self.tools[1] + [_part(_message_text(m)) for m in view.messages(messages)]
        reused, new = split(self.last, now)
        self.last, self.calls = now, self.calls + 1
        self.reused, self.new = self.reused + reused, self.new + new

    def close(self, turn: int, reported: Usage | None) -> TurnUsage | None:
        """The finished turn's record (``None`` when nothing was seen or reported); resets."""
        if not self.calls and reported is None:
            return None
        seen = self.calls > 0
        out = TurnUsage(
            turn,
            self.reused if seen else None,
            self.new if seen else None,
            reported.cached_input_tokens if reported else None,
            reported.uncached_input_tokens if reported else None,
            reported.output_tokens if reported else None,
        )
        self.reused = self.new = self.calls = 0
        return out
