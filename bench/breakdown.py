"""Where a replayed tooltray session's price goes: every priced token of every call, by what it
is (the session bench's ``--breakdown``).

Each call of a tooltray session (``peers.play_tooltray``) is priced against the one before it as
``pricing.py`` prices it; here each of its segments is charged to a part instead of summed:

- ``fixed``: the meta-tools and the system text (instructions, bundle menu, the text path's
  call hints), the part every selected call pays whatever is loaded;
- ``held``: the tools in the prefix (the opening, CORE; the whole catalog in ``all`` mode);
- ``answer:<kind>``: an escape's answer in the conversation (``query``, ``bundle``,
  ``fallback``: the meta-tool's text and the listing of the tools it revealed);
- ``note``: the reveal notes woven before a turn's message (what growth revealed);
- ``conversation``: user messages, tool results, the calls' own outputs in the transcript;
- ``output:escape``: an escape's generated tokens (the round trip itself).

Cached segments are charged at the cached rate, new ones at the write rate, so the parts add up
to the session's price. ``calls`` counts the calls per kind (``escape:<kind>``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from corpora import Conversation
from layout import EXTRA_CALLS, Transcript, as_segments, segment
from pricing import PROFILES, Profile, Segment, common_prefix

from tooltray.memory.core.prompt import PromptView
from tooltray.memory.metatools.meta_tools import CALL_TOOL
from tooltray.tools.render import NATIVE_PATHS, render_one

LABELS: dict[str, str] = {}
"""Segment key -> part, filled as the replay renders each call's prefix (keys are content
hashes, so one map serves every session)."""


def label_prefix(view: PromptView) -> None:
    """Remember what each segment of ``view``'s prefix is (``layout.view_prefix``'s order)."""
    if view.path in NATIVE_PATHS:
        for spec in view.specs:
            meta = spec.source == "meta" or spec.name == CALL_TOOL
            LABELS.setdefault(segment(render_one(view.path, spec)).key, "fixed" if meta else "held")
    lines = {render_one("text", s) for s in view.text_specs}
    block = view.tool_block
    head = view.system_prefix[: len(view.system_prefix) - len(block)] if block else ""
    LABELS.setdefault(segment(head or view.system_prefix).key, "fixed")
    for line in block.split("\n") if block else ():
        LABELS.setdefault(segment(line).key, "held" if line in lines else "fixed")


class Labelled(Transcript):
    """A transcript that remembers what each message segment it appends is."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: dict[str, str] = {}
        self.pending = ""

    def users(self, texts: Sequence[str], note: str = "") -> None:
        before = len(self.messages)
        super().users(texts, note)
        for seg in self.messages[before:]:
            self.parts[seg.key] = "conversation"
        if note:  # the woven message: its note and the turn's own (short) message
            self.parts[self.messages[-1].key] = "note"

    def escape(self, kind: str, prefix: Sequence[Segment], answer: Segment) -> None:
        self.call(prefix, "escape", [answer])
        self.parts[answer.key] = f"answer:{kind}"
        self.parts[f"kind:{len(self.calls) - 1}"] = kind


def play(
    conv: Conversation,
    calls: Sequence[Sequence[Sequence[Any]]],
    kinds: Sequence[Sequence[str]],
    notes: Sequence[str],
) -> Labelled:
    """tooltray's replayed calls as ``peers.play_tooltray`` plays them, labelled."""
    t = Labelled()
    for turn, turn_calls, turn_kinds, note in zip(conv.turns, calls, kinds, notes, strict=True):
        t.users([*turn.earlier, turn.query], note)
        left = list(turn_kinds)
        for kind, detail, raw in turn_calls:
            prefix = as_segments(raw)
            if kind == "escape":
                t.escape(left.pop(0) if left else "?", prefix, segment(str(detail)))
            else:
                result = [t.result(str(detail))] if kind == "tool" else []
                t.call(prefix, kind, result)
                for seg in t.messages[-1 - len(result) :]:
                    t.parts.setdefault(seg.key, "conversation")
    return t


def charge(t: Labelled, profile: Profile) -> dict[str, float]:
    """Each part's share of the session's price under ``profile``."""
    out: dict[str, float] = {}
    before: tuple[Segment, ...] = ()
    for i, call in enumerate(t.calls):
        k = common_prefix(before, call.prompt)
        for j, seg in enumerate(call.prompt):
            rate = profile.cached_read if j < k else profile.uncached * profile.cache_write
            part = LABELS.get(seg.key) or t.parts.get(seg.key, "conversation")
            out[part] = out.get(part, 0.0) + seg.tokens * rate
        if call.kind in EXTRA_CALLS:
            key = f"output:{t.parts.get(f'kind:{i}', call.kind)}"
            out[key] = out.get(key, 0.0) + call.output_tokens * profile.output
        before = call.prompt
    return out


def breakdown(
    convs: Sequence[Conversation],
    calls: dict[str, list[list[list[Any]]]],
    kinds: dict[str, list[list[str]]],
    notes: dict[str, list[str]],
) -> dict[str, Any]:
    """Each part's share of tooltray's summed session price per profile, and calls by kind."""
    played = [play(c, calls[c.id], kinds[c.id], notes[c.id]) for c in convs if c.id in calls]
    out: dict[str, Any] = {}
    for profile in PROFILES:
        total: dict[str, float] = {}
        for t in played:
            for part, cost in charge(t, profile).items():
                total[part] = total.get(part, 0.0) + cost
        out[profile.name] = {k: round(v, 2) for k, v in sorted(total.items())}
    counts: dict[str, int] = {}
    for t in played:
        for i, call in enumerate(t.calls):
            kind = f"escape:{t.parts[f'kind:{i}']}" if call.kind == "escape" else call.kind
            counts[kind] = counts.get(kind, 0) + 1
    out["calls"] = counts
    return out
