"""A session in four numbers: first-pass recall, escapes, tool tokens against eager, prefix changes.

These are what tell whether tooltray helped: were the tools the model called already loaded, how
often it had to reach for an escape hatch, what the tool part of the prompt cost next to exposing
every tool, and how often the cached prefix was invalidated. All come from the store, recall by
replaying the history (:mod:`tooltray.memory.eval.recall`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tooltray.memory.eval.recall import evaluate_store
from tooltray.memory.store import Store, TurnRecord


@dataclass(frozen=True)
class SessionSummary:
    """The headline figures of one stored session."""

    session_id: str
    turns: int
    called_turns: int
    first_pass_turns: int
    recall: float | None
    escapes: dict[str, int]
    recorded_turns: int
    tool_tokens: int
    eager_tokens: int
    prefix_changes: list[int]
    prompt_reused: int | None = None
    prompt_new: int | None = None
    reported: tuple[int, int, int] | None = None

    @property
    def token_share(self) -> float:
        """Tool tokens over eager tokens, summed over the recorded turns."""
        return self.tool_tokens / self.eager_tokens if self.eager_tokens else 1.0


def prefix_changes(turns: list[TurnRecord]) -> list[int]:
    """Turns whose prompt prefix differs from the previous turn's (a KV-cache miss)."""
    pairs = zip(turns[:-1], turns[1:], strict=True)
    return [b.turn for a, b in pairs if a.prefix_hash != b.prefix_hash]


def summarize(store: Store, session_id: str) -> SessionSummary:
    """Read ``session_id``'s figures from the store (StoreError if it is not there)."""
    session = evaluate_store(store, [session_id]).sessions[0]
    called = [t for t in session.per_turn if t.calls]
    escapes: dict[str, int] = {}
    for event in store.history(session_id):
        if event.kind == "escape":
            kind = (event.detail or "escape").split(" ", 1)[0]  # the hatch, not what it asked for
            escapes[kind] = escapes.get(kind, 0) + 1
    turns = store.turns(session_id)
    return SessionSummary(
        session_id=session_id,
        turns=session.turns,
        called_turns=len(called),
        first_pass_turns=sum(t.first_pass for t in called),
        recall=sum(t.ok for t in called) / len(called) if called else None,
        escapes=escapes,
        recorded_turns=len(turns),
        tool_tokens=sum(t.tool_tokens for t in turns),
        eager_tokens=sum(t.eager_tokens or 0 for t in turns),
        prefix_changes=prefix_changes(turns),
        prompt_reused=_total([t.prompt_reused for t in turns]),
        prompt_new=_total([t.prompt_new for t in turns]),
        reported=reported_usage(turns),
    )


def _total(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def reported_usage(turns: list[TurnRecord]) -> tuple[int, int, int] | None:
    """The provider's reported cached, uncached and output tokens, summed (``None``: never)."""
    told = [t for t in turns if t.usage_cached is not None]
    if not told:
        return None
    cached = sum(t.usage_cached or 0 for t in told)
    return cached, sum(t.usage_uncached or 0 for t in told), sum(t.usage_output or 0 for t in told)


def summary_lines(s: SessionSummary) -> list[str]:
    """The closing summary, one figure per line.

    A session whose history rows were dropped (``db prune``) has no turns to measure: it says
    so instead of a perfect "1.00 (0 of 0 turns)".
    """
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(s.escapes.items())) or "none"
    changes = ", ".join(map(str, s.prefix_changes)) or "none"
    n = s.recorded_turns
    return [
        _first_pass_line(s),
        f"escapes: {sum(s.escapes.values())} ({kinds})",
        f"tool tokens: {s.tool_tokens:,} over {n} turns, {100 * s.token_share:.0f}% of eager "
        f"({s.eager_tokens:,})"
        if n
        else "tool tokens: n/a (no turn rows stored)",
        f"prompt prefix changed at {len(s.prefix_changes)} of {max(n - 1, 0)} turn boundaries "
        f"(turns: {changes})",
        *prompt_lines(s),
    ]


def _first_pass_line(s: SessionSummary) -> str:
    if not s.called_turns:
        return (
            f"first-pass recall: n/a (no stored turn of the {s.turns} has tool calls; "
            "`tooltray db prune` drops old history rows)"
        )
    recall = "n/a" if s.recall is None else f"{s.recall:.2f}"
    return (
        f"first-pass recall: {s.first_pass_turns / s.called_turns:.2f} ({s.first_pass_turns} "
        f"of {s.called_turns} turns with tool calls had every tool loaded before the model "
        f"acted); after recovery {recall}"
    )


def prompt_lines(s: SessionSummary) -> list[str]:
    """The session's prompt tokens re-used and new, and the provider's usage, where stored."""
    out = []
    if s.prompt_new is not None:
        reused, new = s.prompt_reused or 0, s.prompt_new
        share = 100 * reused / (reused + new) if reused + new else 0.0
        out.append(f"prompt tokens (estimate): {reused:,} re-used ({share:.0f}%), {new:,} new")
    if s.reported is not None:
        cached, uncached, output = s.reported
        out.append(
            f"reported by the provider: {cached:,} cached, {uncached:,} uncached input, "
            f"{output:,} output"
        )
    return out
