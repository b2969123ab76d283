"""An oracle co-use table from other conversations' gold: what learned companions could give.

Bench-only experiment for ``--oracle``: the companions of a tool are the tools used with it in the
same or the next turn of the *other* conversations (strength = P(companion | tool)), the table a
store would learn from a perfect history. Past-request votes are not simulated (empty).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from corpora import Conversation
from numpy.typing import NDArray

from tooltray.memory.learning.usage import Usage


class OracleSignals:
    """Companions counted from gold co-use; implements ``SelectionSignals``."""

    def __init__(self, past: Sequence[Conversation]) -> None:
        self.uses: Counter[str] = Counter()
        self.pairs: Counter[tuple[str, str]] = Counter()
        for conv in past:
            for k, turn in enumerate(conv.turns):
                self.uses.update(set(turn.gold))
                nxt = conv.turns[k + 1].gold if k + 1 < len(conv.turns) else ()
                together = set(turn.gold) | set(nxt)
                self.pairs.update((a, b) for a in set(turn.gold) for b in together if a != b)

    def companions(self, tools: Sequence[str]) -> dict[str, float]:
        """Tools seen with ``tools`` in the same or next turn, by conditional frequency."""
        out: dict[str, float] = {}
        for (a, b), n in self.pairs.items():
            if a in tools and self.uses[a]:
                out[b] = max(out.get(b, 0.0), n / self.uses[a])
        return out

    def past_requests(
        self,
        vectors: NDArray[np.float32],
        weights: Any = None,
        session: Any = None,
        fresh: bool = True,
    ) -> dict[str, float]:
        """Not simulated."""
        return {}

    def past_searches(self, vector: NDArray[np.float32], session: Any = None) -> dict[str, float]:
        """Not simulated."""
        return {}

    def session_needs(self, growth_miss: float) -> tuple[float, int]:
        """Not simulated."""
        return 0.0, 0

    def usage(self, session: Any = None, explained: Any = None, fresh: Any = True) -> Usage:
        """Not simulated (no usage priors)."""
        return Usage()
