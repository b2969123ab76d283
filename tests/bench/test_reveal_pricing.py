"""Reveal by appending, priced: a revealed tool is paid once where it is appended, then cached.

A hand-made four-turn session over the demo catalog, through the real trinket, embedder and a
SQLite file (``reveal = "append"``, ``context_window`` 8192): later turns grow (which ones is the
planner's call), so their tools are revealed in a note woven before the turn's user message
instead of joining ``tools=``. The bench must price that message exactly as
``PromptView.messages`` sends it (else the revealed tools' tokens are missing from the bill), new
in one call and cached in every later one, while every call's prefix (``tools=``, the system
text) stays the same bytes all session long.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import corpora  # noqa: E402
import layout  # noqa: E402
import peers  # noqa: E402
import pricing  # noqa: E402
import session  # noqa: E402
from pricing import LATENCY, PRICE, Call, Segment  # noqa: E402

from tooltray.tools.demo import demo_registry  # noqa: E402

ASKS = [
    ("Show me the git status of the repo and the diff", ("git_status", "git_diff")),
    ("Now email the summary of that diff to bob@example.com", ("email_send",)),
    ("Also put a meeting about it on my calendar tomorrow at 10", ("calendar_create_event",)),
    ("Thanks, commit the changes", ("git_commit",)),
]


def _conversation() -> corpora.Conversation:
    """The four asks as one conversation, each turn carrying the user messages before it."""
    earlier = [q for q, _ in ASKS]
    turns = tuple(corpora.Turn(q, g, tuple(earlier[:i])) for i, (q, g) in enumerate(ASKS))
    return corpora.Conversation("demo", turns)


def _replay(
    tmp_path: Path, path: str, reveal: str
) -> tuple[list[session.TurnResult], list[dict[str, Any]]]:
    """Every turn through one trinket, and the messages its last view sends for the last turn
    (the same turn again: no growth, so nothing changes)."""
    conv, url = _conversation(), f"sqlite:///{tmp_path / 'demo.db'}"
    settings = session.base_settings(path, reveal=reveal)
    with session.open_trinket(demo_registry(), url, settings) as trinket:
        results = [session.run_turn(trinket, "s", conv, k) for k in range(len(conv.turns))]
        messages = corpora.messages_for(conv.turns[-1])
        sent = trinket.prepare("s", messages).messages(messages)
    return results, sent


def _new_in(calls: list[Call], seg: Segment) -> list[int]:
    """The calls that prefill ``seg`` (it lies at or past the part cached from the call before)."""
    out, before = [], tuple[Segment, ...]()
    for i, call in enumerate(calls):
        cached = pricing.common_prefix(before, call.prompt)
        if seg in call.prompt and call.prompt.index(seg) >= cached:
            out.append(i)
        before = call.prompt
    return out


def _noted_message(calls: list[Call], text: str, ask: str) -> tuple[int, int]:
    """The calls that re-use the woven message ``text`` from the cache (one call prefills it),
    and the tokens its note adds to the bare ``ask``."""
    seg = layout.segment(f"user: {text}")
    first = next(i for i, c in enumerate(calls) if seg in c.prompt)
    assert _new_in(calls, seg) == [first]  # full price once, cached in every later call
    return len(calls) - first - 1, seg.tokens - layout.segment(f"user: {ask}").tokens


@pytest.mark.parametrize("path", ["openai", "text"])
def test_reveal_note_is_priced_once_where_it_is_appended_and_the_prefix_never_changes(
    tmp_path: Path, path: str
) -> None:
    results, sent = _replay(tmp_path, path, "append")
    noted = [r for r in results if r.note]
    assert noted and not results[0].note  # later turns reveal; the boundary (turn 1) does not
    users = [m["content"] for m in sent if m["role"] == "user"]
    raw, notes = [r.calls for r in results], [r.note for r in results]
    calls = peers.play_tooltray(_conversation(), raw, notes).transcript.calls
    bare = peers.play_tooltray(_conversation(), raw).transcript.calls  # priced as before reveals
    extra = {PRICE.name: 0.0, LATENCY.name: 0.0}
    for r in noted:
        ask = ASKS[r.index][0]
        assert users[r.turn - 1] == layout.woven(r.note, ask) == f"{r.note}\n\n{ask}"
        later, grown = _noted_message(calls, users[r.turn - 1], ask)
        for profile in (PRICE, LATENCY):
            extra[profile.name] += profile.charge(grown * later, grown, 0)
    for profile in (PRICE, LATENCY):
        woven, before = (pricing.price_session(c, profile).cost for c in (calls, bare))
        assert woven - before == pytest.approx(extra[profile.name])
    prefixes = {tuple(map(tuple, c[2])) for r in results for c in r.calls}
    assert len(prefixes) == 1  # tools= and the system text: the same bytes in every call


def test_prefix_reveal_weaves_no_note_so_it_is_priced_as_before(tmp_path: Path) -> None:
    results, sent = _replay(tmp_path, "openai", "prefix")
    assert all(r.note == "" for r in results)
    assert [m["content"] for m in sent if m["role"] == "user"] == [q for q, _ in ASKS]
    assert len({r.prefix_hash for r in results}) > 1  # growth joins tools= instead
