"""What selection may learn from past sessions, as a protocol the planner can ask cheaply.

The store implements it (``tooltray.memory.learning``); :class:`NoSignals` is the cold start and
the ``learn = "off"`` answer, so the planner never has to ask whether learning is on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy


class SelectionSignals(Protocol):
    """What the store learned from past sessions; every method is cheap and never raises."""

    def companions(self, tools: Sequence[str]) -> dict[str, float]:
        """Tools used with ``tools`` (same or next turn): name -> strength in [0, 1]."""
        ...

    def past_requests(self, vectors: numpy.ndarray) -> dict[str, float]:
        """Name -> vote in [0, 1] from the past turns nearest to the conversation's messages.

        Args:
            vectors: (n, d) float32 L2-normalised query embeddings of the conversation's user
                messages, latest last.
        """
        ...


class NoSignals:
    """No history: nothing to add (the cold start, and what ``learn = "off"`` uses)."""

    def companions(self, tools: Sequence[str]) -> dict[str, float]:
        """Nothing learned."""
        return {}

    def past_requests(self, vectors: numpy.ndarray) -> dict[str, float]:
        """Nothing learned."""
        return {}
