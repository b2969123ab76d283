"""Conversation-aware scores: every user message scored apart, combined with a decay.

One fixed query rule fails one dev corpus or the other: in bfcl_multiturn every turn states a new
task and the current message alone retrieves best; in apibank the call follows follow-ups ("Yes,
that's correct.", "My username is X") and the task is in an earlier message. So each message of
the session is scored on its own calibrated (z) scale, and a tool's conversation score is the best
of its weighted message scores: the current message at weight 1, an earlier one at
``DECAY ** k`` where ``k`` counts the *task* messages after it. A follow-up is told by how weakly it
matches anything (its best fused z below ``FOLLOW_UP_TOP``, or below ``FOLLOW_UP_RATIO`` of the
conversation's strongest message: z-scales differ by catalog), not by its word count, and does not
age the context: after "request, follow-up, follow-up" the request still weighs 1.

Growth (later turns, append-only) adds the strongest tools of the conversation score not loaded
yet that the current message supports (both retrievers z >= 1, where the old rule needed 2.5
from both on the current message alone); evidence accumulated over several messages counts
(``EVIDENCE_SHARE`` x the weighted sum of positive message scores). A message that starts a new
task is also judged on its own scores (:func:`new_task`), since an earlier request can hold the
conversation's top far above the new task's tools. Learned past-request votes join as a third
calibrated retriever (z over the catalog, ``PAST_WEIGHT``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.retrieval.bundles import Bundles
from tooltray.memory.retrieval.fusion import zscores
from tooltray.memory.tuning import (
    DECAY,
    EVIDENCE_SHARE,
    FOLLOW_UP_RATIO,
    FOLLOW_UP_TOP,
    FRESH_BAR,
    FRESH_GATE,
    FRESH_MATE_FLOOR,
    FRESH_MATES,
    FRESH_RATIO,
    FRESH_SHARE,
    GROW_BAR,
    GROW_K,
    GROW_RATIO,
    GROW_SUPPORT,
    PAST_WEIGHT,
    VOTE_MIN,
)

Row = NDArray[np.float64]


@dataclass(frozen=True)
class MessageScores:
    """One user message's final (bundle-lifted) scores and its best score."""

    final: Row

    @property
    def top(self) -> float:
        """The best score: how strongly the message matches anything."""
        finite = self.final[np.isfinite(self.final)]
        return float(finite.max()) if finite.size else 0.0


def tasks(messages: Sequence[MessageScores]) -> list[bool]:
    """Per message: does it state a task (match something strongly), or follow one up?"""
    best = max((m.top for m in messages), default=0.0)
    line = max(FOLLOW_UP_TOP, FOLLOW_UP_RATIO * best)
    return [m.top >= line for m in messages]


def weights(messages: Sequence[MessageScores]) -> list[float]:
    """Per message (oldest first): ``DECAY`` to the number of task messages after it."""
    out, tasks_after = [], 0
    for task in reversed(tasks(messages)):
        out.append(DECAY**tasks_after)
        tasks_after += task
    return out[::-1]


def combine(messages: Sequence[MessageScores], votes: Row | None = None) -> Row:
    """The conversation score: the best weighted message score per tool (+ past votes)."""
    rows = np.vstack([m.final for m in messages])
    w = np.asarray(weights(messages))[:, None]
    weighted = np.where(rows > 0, rows * w, rows)
    out: Row = weighted.max(axis=0)
    if votes is not None and np.any(votes > 0):
        out = out + PAST_WEIGHT * zscores(votes)
    return out


def earlier_tasks(messages: Sequence[MessageScores]) -> Row:
    """The score rows of the task messages before the current one (oldest first).

    A request followed by a message that strongly matches other tools ("My username is X and my
    password is Y" matches every account tool) is aged by it in :func:`combine` and can fall under
    the conversation bar; its own best tools must still load (``sentence_best`` over these rows).
    """
    flags = tasks(messages)[:-1]
    rows = [m.final for m, task in zip(messages[:-1], flags, strict=True) if task]
    return np.vstack(rows) if rows else np.zeros((0, len(messages[-1].final)))


def evidence(messages: Sequence[MessageScores]) -> Row:
    """Weighted sum of positive message scores: what several weak mentions add up to."""
    rows = np.vstack([np.maximum(m.final, 0.0) for m in messages])
    w = np.asarray(weights(messages))[:, None]
    return np.asarray((rows * w).sum(axis=0) * EVIDENCE_SHARE, np.float64)


def vote_row(votes: Mapping[str, float], position: Mapping[str, int], n: int) -> Row | None:
    """Past-request votes as a catalog row (``None`` without any vote for a known tool)."""
    row = np.zeros(n)
    for name, vote in votes.items():
        if name in position:
            row[position[name]] = float(vote)
    return row if np.any(row > 0) else None


def voted(votes: Row | None) -> list[int]:
    """Tools most of the nearest past requests led to (vote >= ``VOTE_MIN``), best first.

    They are picked beside the conversation's own picks rather than through its score: a
    strong vote added to the score raises the top, and with it the relative bar, so the
    message's other good matches would drop out.
    """
    if votes is None:
        return []
    order = np.argsort(-votes, kind="stable")
    return [int(i) for i in order if votes[i] >= VOTE_MIN]


def support(lexical_z: Row, dense_z: Row, dense: bool) -> Row:
    """How much the current message alone backs each tool: the weaker retriever's z-score.

    One rare word can put a tool many lexical deviations out ("next" -> "stage files for the
    next commit"); the dense side must see it too. Without dense scores, the lexical z.
    """
    return np.minimum(lexical_z, dense_z) if dense else lexical_z


def growth(score: Row, extra: Row, loaded: Sequence[int], current: Row | None = None) -> list[int]:
    """Tools a later turn may append: strong on the conversation score, not loaded, at most 3.

    The current message must lend a tool some support (``GROW_SUPPORT``): a bare "next" never
    re-adds what an earlier request matched but the initial selection left out.
    """
    grow = np.maximum(score, extra)
    if current is not None:
        grow = np.where(current >= GROW_SUPPORT, grow, -np.inf)
    top = float(np.max(grow[np.isfinite(grow)])) if np.isfinite(grow).any() else 0.0
    line = max(GROW_BAR, GROW_RATIO * top)
    have = set(loaded)
    order = [int(i) for i in np.argsort(-grow, kind="stable")[: GROW_K + len(have)]]
    return [i for i in order if grow[i] >= line and i not in have][:GROW_K]


def new_task(own: Row, backed: Row, loaded: Sequence[int]) -> list[int]:
    """Tools of a task the current message starts, judged on its own scores, at most 3.

    Growth over the conversation score misses a new task: after "fill the tank" (6.9), "now get
    the engine running" scores startEngine 3.9, under the conversation bar (0.8 x the top). When
    one of the message's own best ``FRESH_GATE`` tools is not loaded, the message asks for
    something new: its supported tools not loaded join when they clear ``FRESH_BAR``,
    ``FRESH_RATIO`` of the best of them and ``FRESH_SHARE`` of the message's best (a distant
    runner-up of a loaded tool is no new task).
    Their closest bundle-mates join too (:func:`fresh_mates`), in the same prefix change.
    """
    have = set(loaded)
    finite = np.isfinite(own)
    ranked = np.where(finite, own, -np.inf)
    best = np.argsort(-ranked, kind="stable")[:FRESH_GATE]
    ok = finite & (backed >= GROW_SUPPORT)
    ok[list(have)] = False
    if all(int(i) in have for i in best) or not ok.any():
        return []
    top = float(own[ok].max())
    line = max(FRESH_BAR, FRESH_RATIO * top, FRESH_SHARE * float(ranked.max()))
    order = np.argsort(-np.where(ok, own, -np.inf), kind="stable")
    return [int(i) for i in order if ok[i] and own[i] >= line][:GROW_K]


def fresh_mates(
    picks: Sequence[int], own: Row, bundles: Bundles, loaded: Sequence[int]
) -> list[int]:
    """The ``FRESH_MATES`` bundle-mates of a new task's picks that the message backs best.

    A task worded loosely ("buzz Catherine", "dispatch a note to David") matches its bundle's
    tools more than the one it needs: delete_message leads and send_message sits at 1.2-2.3.
    Mates the message itself scores at ``FRESH_MATE_FLOOR`` or more come along; bfcl_multiturn
    later turns missing a tool 39 -> 32 of 319 in the growth replay, with no extra prefix change.
    """
    return bundles.close_mates(picks, own, FRESH_MATE_FLOOR, set(loaded))[:FRESH_MATES]
