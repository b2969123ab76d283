"""Prompts as providers lay them out, cut into priced segments, and the transcript they grow.

Native paths send ``tools=`` first (one segment per tool, in rendered order, as
``tools/render.py`` renders it), then the system text, then the messages. The text path has no
``tools=``: its system text ends with the tool block, one segment per line, so a tool appended to
the block keeps the lines before it cached. Messages are appended to a :class:`Transcript` shared
by every call of a session; each call sends ``prefix + transcript so far``.

What the corpora do not hold is filled with fixed sizes: a tool's result is
:data:`RESULT_TOKENS`, a call's output :data:`pricing.CALL_OUTPUT_TOKENS`. Both are the same for
tooltray and every peer. Every call's output joins the transcript, but only an extra call's
(an escape, a search) is priced as output: the tool calls and answers every approach generates
alike cannot be changed by tool selection and their real size is not in the corpora, so pricing
them would only add the same guessed amount to every approach (issue 26 prices "an extra round
trip's output" the same way).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pricing import CALL_OUTPUT_TOKENS, Call, Segment

from tooltray.memory.core.prompt import PromptView, weave
from tooltray.tools.render import NATIVE_PATHS, count_tokens, render_one
from tooltray.tools.spec import ToolSpec

RESULT_TOKENS = 50
"""Tokens of one tool's result in the transcript (the corpora hold none): a short JSON answer,
as BFCL's file-system and vehicle results and API-Bank's records mostly are."""

PLACEHOLDER_ANSWER = "(done)"
EXTRA_CALLS = ("escape", "search")
"""Call kinds that exist only because a tool was missing: their output is priced."""


@lru_cache(maxsize=200_000)
def segment(text: str) -> Segment:
    """A segment for exact text: its sha1 as identity, its o200k tokens."""
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]
    return Segment(digest, count_tokens(text).n)


def sized(key: str, tokens: int) -> Segment:
    """A segment whose text the corpus lacks (a result, a call's output): a key and a size."""
    return Segment(hashlib.sha1(key.encode("utf-8")).hexdigest()[:16], tokens)


def tool_segments(path: str, specs: Sequence[ToolSpec]) -> list[Segment]:
    """One segment per tool, as ``tools/render.py`` renders it on ``path`` (line or JSON)."""
    return [segment(render_one(path, s)) for s in specs]


def system_segments(text: str, block: str = "") -> list[Segment]:
    """The system text: everything before the text-path tool ``block``, then each block line."""
    head = text[: len(text) - len(block)] if block and text.endswith(block) else text
    out = [segment(head)] if head.strip() else []
    return out + [segment(line) for line in block.split("\n") if block]


def view_prefix(view: PromptView) -> list[Segment]:
    """What the trinket rendered for one call, before the messages (tools=, system text)."""
    tools = tool_segments(view.path, view.specs) if view.path in NATIVE_PATHS else []
    return tools + system_segments(view.system_prefix, view.tool_block)


def woven(note: str, text: str) -> str:
    """A user message's text with ``note`` before it, by the library's own ``weave`` (so the
    priced bytes are those ``PromptView.messages`` sends)."""
    if not note:
        return text
    return str(weave([{"role": "user", "content": text}], {1: note})[0]["content"])


def as_segments(raw: Sequence[Sequence[Any]]) -> tuple[Segment, ...]:
    """Segments back from their JSON form (``[[key, tokens], ...]``)."""
    return tuple(Segment(str(k), int(t)) for k, t in raw)


@dataclass
class Transcript:
    """The messages of one session so far, and the calls made over them.

    Every call sends its ``prefix`` (tools and system text, which may change between calls)
    followed by every message so far; the call's output is appended as an assistant message,
    then whatever answers it (a tool result, a search result).
    """

    messages: list[Segment] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    seen_users: int = 0

    def users(self, texts: Sequence[str], note: str = "") -> None:
        """The user messages of a turn not yet in the transcript (``texts``: all of them so far).

        Earlier messages without calls (turn gaps) are followed by a placeholder answer, as the
        replay's own messages are (``corpora.messages_for``). ``note`` (a reveal note, ``reveal
        = "append"``) joins the turn's own message, the last one, as the trinket weaves it: its
        tokens are new once, then cached with the message in every later call.
        """
        new = list(texts[self.seen_users :])
        for i, text in enumerate(new):
            own = note if i == len(new) - 1 else ""
            self.messages.append(segment(f"user: {woven(own, text)}"))
            if i < len(new) - 1:
                self.messages.append(segment(f"assistant: {PLACEHOLDER_ANSWER}"))
        self.seen_users = len(texts)

    def call(self, prefix: Sequence[Segment], kind: str, result: Sequence[Segment] = ()) -> None:
        """One model call over ``prefix`` + the messages; its output and ``result`` follow it."""
        priced = CALL_OUTPUT_TOKENS if kind in EXTRA_CALLS else 0
        self.calls.append(Call((*prefix, *self.messages), priced, kind))
        self.messages.append(sized(f"out:{len(self.calls)}:{kind}", CALL_OUTPUT_TOKENS))
        self.messages.extend(result)

    def result(self, tool: str) -> Segment:
        """A tool's result of :data:`RESULT_TOKENS` (unique per call)."""
        return sized(f"result:{len(self.calls)}:{tool}", RESULT_TOKENS)
