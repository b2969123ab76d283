"""What selection may learn from past sessions: the protocol the store's learned history fills.

The planner codes against :class:`SelectionSignals` only, so selection works the same with or
without history: :class:`NoSignals` (the default) answers nothing and the planner then selects
from the conversation alone (cold start). A store-backed implementation lives with the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray


class SelectionSignals(Protocol):
    """What the store learned from past sessions; every method is cheap and never raises."""

    def companions(self, tools: Sequence[str]) -> dict[str, float]:
        """Tools learned to be used with ``tools`` (same or next turn): name -> strength 0..1."""
        ...

    def past_requests(
        self,
        vectors: NDArray[np.float32],
        weights: Sequence[float] | None = None,
        session: str | None = None,
    ) -> dict[str, float]:
        """Votes in [0, 1] from the past turns nearest to ``vectors``.

        Args:
            vectors: ``(n, d)`` float32 L2-normalised query embeddings of the conversation's user
                messages, latest last.
            weights: how much each message counts (the conversation's decay; default: the
                latest 1, each earlier one half).
            session: the asking session: its own past turns do not vote.
        """
        ...


@runtime_checkable
class SessionNeeds(Protocol):
    """Optional: how many of a session's tools its opening must hold, learned from history."""

    def session_needs(self, growth_miss: float) -> tuple[float, int]:
        """The mean over past sessions of their first turn's tools plus ``growth_miss`` of the
        tools their later turns added, and how many sessions that mean is over (0: none)."""
        ...


class NoSignals:
    """No history: nothing learned, so selection rests on the conversation alone."""

    def companions(self, tools: Sequence[str]) -> dict[str, float]:
        """Always empty."""
        return {}

    def past_requests(
        self,
        vectors: NDArray[np.float32],
        weights: Sequence[float] | None = None,
        session: str | None = None,
    ) -> dict[str, float]:
        """Always empty."""
        return {}


@dataclass(frozen=True)
class SessionSignals:
    """``inner`` as one session asks it: the session's own past turns never vote.

    Its earlier requests led to tools that are loaded already; as the nearest rows to its next
    message they would crowd out the other sessions' turns that know the new task's tool
    (bfcl_multiturn: "submit a formal complaint about the cancellation" found its own "cancel
    the booking" turns before the past sessions that filed tickets).
    """

    inner: SelectionSignals
    session: str

    def companions(self, tools: Sequence[str]) -> dict[str, float]:
        """The inner companions (co-use counts carry no session)."""
        return self.inner.companions(tools)

    def past_requests(
        self,
        vectors: NDArray[np.float32],
        weights: Sequence[float] | None = None,
        session: str | None = None,
    ) -> dict[str, float]:
        """The inner votes of every other session."""
        return self.inner.past_requests(vectors, weights, session or self.session)
