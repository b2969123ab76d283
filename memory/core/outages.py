"""Outages: a fault is logged loudly and signalled once, and said to be over once.

A database or embedder that fails on every call must not flood the log, and a later outage must
be loud again; :class:`Outages` keeps that per session and per reason (``store``, ``selection``).
"""

from __future__ import annotations

import logging

from tooltray.events import payloads as p
from tooltray.events import signals as sig
from tooltray.memory.core.session import SessionState

log = logging.getLogger("tooltray")


def warn(state: SessionState, reason: str, exc: Exception) -> None:
    """Log loudly and signal ``loader-degraded``, once per outage (:func:`recovered` ends one)."""
    if reason in state.warned:
        return
    state.warned.add(reason)
    kept = "keeping the last known tools and queueing changes until it is back"
    log.error(
        "tooltray %s failed for session %s: %s; %s.",
        reason,
        state.session_id,
        exc,
        "exposing all tools" if state.health == "degraded" else kept,
    )
    sig.emit(
        sig.loader_degraded,
        state.session_id,
        p.LoaderDegraded(turn=state.turn, reason=reason, error=str(exc)),
    )


def recovered(state: SessionState, reason: str) -> None:
    """The fault behind ``reason`` is gone: say so, so that the next outage is loud again."""
    if reason in state.warned:
        state.warned.discard(reason)
        log.warning("tooltray %s works again for session %s.", reason, state.session_id)
