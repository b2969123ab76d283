"""Per-session state held by the trinket: the stored snapshot plus what only this process knows.

The change rules themselves live with the store (:mod:`tooltray.memory.store.records`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tooltray.memory.core.usage import PromptMeter
from tooltray.memory.store.records import Changes, SelectionMode, SessionSnapshot

Health = Literal["ok", "degraded", "disabled"]
"""Whether the loader works for a session: ``ok``; ``degraded`` (a fault: every tool is shown
until it passes); ``disabled`` (loader or memory switched off: every tool, silently)."""

ViewMode = Literal["selected", "all", "degraded", "disabled"]
"""What a prompt shows: a selection, everything because the catalog is small (``all``), or
everything because the loader is degraded or disabled."""

MODE_SELECTED: SelectionMode = "selected"
MODE_ALL: SelectionMode = "all"


def grown_turn(snapshot: SessionSnapshot) -> int:
    """The last turn whose growth is stored (``-1``: none), so a restart does not redo it."""
    return _counter(snapshot.meta.get("grown"), -1)


def learned_upto(snapshot: SessionSnapshot) -> int:
    """How many user messages stored lessons covered (``0``: none), kept across restarts."""
    return _counter(snapshot.meta.get("learned"), 0)


def _counter(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def user_turn(messages: Sequence[dict[str, Any]]) -> int:
    """The turn a conversation is at: its number of user messages (the one meaning of "turn").

    Assistant replies and tool results do not count, so a turn with three tool calls is still
    one turn, and idle eviction (``idle_turns``) and a fallback's one-turn life count user turns.
    """
    return len(user_texts(messages))


def user_texts(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The user messages' text, oldest first (list-of-parts contents are joined)."""
    out = []
    for m in messages:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(
                str(part.get("text", "")) for part in content if isinstance(part, dict)
            )
        out.append(str(content or ""))
    return out


@dataclass
class SessionState:
    """What the trinket keeps in memory for one live session.

    Attributes:
        snapshot: the loaded set and counters as last stored (or applied locally).
        health: ``ok``, ``degraded`` or ``disabled`` (see :data:`Health`); what selection
            decided (``selected`` or ``all``) is stored in the snapshot's meta instead.
        fallback_turn: the turn a ``fallback`` is active for, if any.
        pending: changes the store could not take yet, replayed in order when it is back.
        deferred: tool-used changes applied here and stored with the next commit.
        prefix_hash: hash of the last prompt prefix handed out.
        recorded_turn: the last turn whose prefix hash is in the ``turns`` table.
        recorded_count: the loaded count that row holds (revealed tools change it mid-turn
            while the prefix stays, and the row must end as an uninterrupted run's would).
        grown_turn: the last turn whose user message was matched for growth (once per turn).
        warned: reasons logged loudly in the current outage (cleared when it ends, so that a
            later outage is logged again).
        unread: the store could not be read when this state was made: it is not known yet
            whether the session is stored (see :meth:`Journal.unread`).
        taught: allowed tools used since the last turn end (what the turn teaches; learning on).
        user_texts: the conversation's user messages at the last prepare (learning on). At turn
            end the planner embeds the one among them that asked for the tools; never stored
            unless ``learn_keep_text``.
        learned_upto: how many of ``user_texts`` earlier lessons covered (those after it are
            the messages since the last turn that used tools).
        meter: this turn's prompt tokens so far, re-used and new (stored at turn end).
    """

    session_id: str
    snapshot: SessionSnapshot
    health: Health = "ok"
    fallback_turn: int | None = None
    pending: list[Changes] = field(default_factory=list)
    deferred: Changes | None = None
    prefix_hash: str | None = None
    recorded_turn: int = -1
    recorded_count: int = -1
    grown_turn: int = -1
    warned: set[str] = field(default_factory=set)
    unread: bool = False
    taught: list[str] = field(default_factory=list)
    user_texts: list[str] = field(default_factory=list)
    learned_upto: int = 0
    meter: PromptMeter = field(default_factory=PromptMeter)

    @property
    def selection_mode(self) -> SelectionMode:
        """What the stored selection decided: a ``selected`` subset or ``all`` tools."""
        return self.snapshot.meta.get("mode", MODE_SELECTED)

    @property
    def selected(self) -> bool:
        """Whether the session's first selection is stored."""
        return bool(self.snapshot.meta.get("selected"))

    @property
    def turn(self) -> int:
        """The session's turn counter."""
        return self.snapshot.turn

    def loaded_names(self) -> list[str]:
        """Loaded tools in ``tools=`` order."""
        return self.snapshot.names()

    def is_loaded(self, name: str) -> bool:
        """True when ``name`` is in the loaded set (fallback loads included)."""
        return any(t.name == name for t in self.snapshot.loaded)
