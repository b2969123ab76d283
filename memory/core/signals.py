"""What selection may learn from past sessions: the protocol the store's learned history fills.

The planner codes against :class:`SelectionSignals` only, so selection works the same with or
without history: :class:`NoSignals` (the default) answers nothing and the planner then selects
from the conversation alone (cold start). A store-backed implementation lives with the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray


class SelectionSignals(Protocol):
    """What the store learned from past sessions; every method is cheap and never raises."""

    def companions(self, tools: Sequence[str]) -> dict[str, float]:
        """Tools learned to be used with ``tools`` (same or next turn): name -> strength 0..1."""
        ...

    def past_requests(
        self, vectors: NDArray[np.float32], weights: Sequence[float] | None = None
    ) -> dict[str, float]:
        """Votes in [0, 1] from the past turns nearest to ``vectors``.

        Args:
            vectors: ``(n, d)`` float32 L2-normalised query embeddings of the conversation's user
                messages, latest last.
            weights: how much each message counts (the conversation's decay; default: the
                latest 1, each earlier one half).
        """
        ...


class NoSignals:
    """No history: nothing learned, so selection rests on the conversation alone."""

    def companions(self, tools: Sequence[str]) -> dict[str, float]:
        """Always empty."""
        return {}

    def past_requests(
        self, vectors: NDArray[np.float32], weights: Sequence[float] | None = None
    ) -> dict[str, float]:
        """Always empty."""
        return {}
