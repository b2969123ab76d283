"""tooltray's one blinker :class:`~blinker.Namespace` and its documented signals.

Signals are named with hyphens, the sender is the session id (a string: blinker compares strings
by value, so ``connect(fn, sender="s1")`` hears only session ``s1``), and every receiver is called
as ``receiver(sender, payload=Model)``. Use :func:`emit` to send with a checked payload type.
"""

from __future__ import annotations

from typing import Any

from blinker import NamedSignal, Namespace
from pydantic import BaseModel

from tooltray.events import payloads as p

tooltray_signals = Namespace()

turn_completed = tooltray_signals.signal(
    "turn-completed", doc="Agent -> tooltray: a user turn finished. Payload: TurnCompleted."
)
tool_used = tooltray_signals.signal(
    "tool-used", doc="Agent -> tooltray: a real tool ran. Payload: ToolUsed."
)
context_compacted = tooltray_signals.signal(
    "context-compacted",
    doc="Agent or tooltray: context was compacted; idle tools may be evicted. ContextCompacted.",
)
session_started = tooltray_signals.signal(
    "session-started", doc="tooltray: a session started or was resumed. Payload: SessionStarted."
)
session_ended = tooltray_signals.signal(
    "session-ended", doc="tooltray: a session ended. Payload: SessionEnded."
)
tools_loaded = tooltray_signals.signal(
    "tools-loaded", doc="tooltray: tools were appended to the loaded set. Payload: ToolsLoaded."
)
tools_unloaded = tooltray_signals.signal(
    "tools-unloaded", doc="tooltray: tools left the loaded set. Payload: ToolsUnloaded."
)
selection_changed = tooltray_signals.signal(
    "selection-changed",
    doc="tooltray: what the model sees changed (new prefix hash). Payload: SelectionChanged.",
)
escape_hatch = tooltray_signals.signal(
    "escape-hatch", doc="tooltray: the model reached past the selection. Payload: EscapeHatch."
)
loader_degraded = tooltray_signals.signal(
    "loader-degraded",
    doc="tooltray: the loader fell back to all tools or the last set. Payload: LoaderDegraded.",
)
tools_registered = tooltray_signals.signal(
    "tools-registered",
    doc="tools: tools were registered at run time; the sender is the registry. ToolsRegistered.",
)

PAYLOADS: dict[str, type[BaseModel]] = {
    "turn-completed": p.TurnCompleted,
    "tool-used": p.ToolUsed,
    "context-compacted": p.ContextCompacted,
    "session-started": p.SessionStarted,
    "session-ended": p.SessionEnded,
    "tools-loaded": p.ToolsLoaded,
    "tools-unloaded": p.ToolsUnloaded,
    "selection-changed": p.SelectionChanged,
    "escape-hatch": p.EscapeHatch,
    "loader-degraded": p.LoaderDegraded,
    "tools-registered": p.ToolsRegistered,
}


def emit(signal: NamedSignal, session_id: str, payload: BaseModel) -> list[tuple[Any, Any]]:
    """Send ``payload`` on ``signal`` from ``session_id`` after checking the payload's type.

    Raises:
        TypeError: the payload is not the model documented for this signal.
    """
    expected = PAYLOADS[signal.name]
    if not isinstance(payload, expected):
        raise TypeError(
            f"Signal {signal.name!r} carries {expected.__name__}, got {type(payload).__name__}: "
            f"build a tooltray.events.{expected.__name__}."
        )
    return signal.send(session_id, payload=payload)
