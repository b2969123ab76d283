"""Bundle cohesion: a strong match lifts its bundle-mates, and pulls small bundles in whole.

* **Lift.** Each tool gains ``LIFT x`` its best bundle-mate's score (when positive) divided by
  ``sqrt(bundle size - 1)``: a mate still has to clear the bar, but with help, and the help thins
  out in big bundles.
* **Pull-in.** A strong match (at least ``PULL_RATIO x`` the top score) pulls in every mate that
  scores ``PULL_FLOOR`` deviations above the catalog mean, from bundles of at most
  ``PULL_MAX_BUNDLE`` tools. A conversation keeps working inside one class of tools, so loading
  the class once costs fewer tokens over a session than the escapes it prevents: every escape is
  one more model round trip and one more prompt-prefix change (a KV-cache miss). The
  single-query rankings (R@k, C@k) do not use pull-in. Bigger bundles are menus, not cohesion
  groups.

The values are in :mod:`tooltray.memory.tuning`; the measurements behind them in
``bench/README.md`` ("Tuned values": bundles).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.tuning import LIFT, PULL_FLOOR, PULL_MAX_BUNDLE, PULL_RATIO


class Bundles:
    """The bundle structure of one catalog, laid out for vectorised per-query work.

    Args:
        bundles: each tool's bundle name (or ``None``), in index order.
    """

    def __init__(self, bundles: Sequence[str | None]) -> None:
        groups: dict[str, list[int]] = {}
        for i, b in enumerate(bundles):
            if b is not None:
                groups.setdefault(b, []).append(i)
        shared = [idx for idx in groups.values() if len(idx) > 1]
        self.members = {b: tuple(idx) for b, idx in groups.items()}
        self.of = list(bundles)
        self.perm = np.array([i for idx in shared for i in idx], dtype=np.int64)
        sizes = np.array([len(idx) for idx in shared], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.size_of = np.repeat(sizes, sizes)
        self.group_of = np.repeat(np.arange(len(shared)), sizes)

    def best_mate(self, scores: NDArray[np.float64]) -> NDArray[np.float64]:
        """For each tool, the best score among its bundle-mates (``-inf`` without mates)."""
        out = np.full(scores.shape, -np.inf)
        if not len(self.perm):
            return out
        g = scores[self.perm]
        first = np.maximum.reduceat(g, self.starts)[self.group_of]
        is_top = g >= first
        n_top = np.add.reduceat(is_top.astype(np.int64), self.starts)[self.group_of]
        second = np.maximum.reduceat(np.where(is_top, -np.inf, g), self.starts)[self.group_of]
        out[self.perm] = np.where(is_top & (n_top == 1), second, first)
        return out

    def lift(self, scores: NDArray[np.float64]) -> NDArray[np.float64]:
        """``scores`` plus each tool's share of its best mate's (positive) score."""
        if not len(self.perm):
            return scores
        mate = np.maximum(self.best_mate(scores)[self.perm], 0.0)
        out: NDArray[np.float64] = scores.copy()
        out[self.perm] += LIFT * mate / np.sqrt(self.size_of - 1)
        return out

    def pull_in(self, tool: int, scores: NDArray[np.float64], top: float) -> list[int]:
        """Mates of ``tool`` to load with it: strong match, small bundle, mates above the floor."""
        bundle = self.of[tool]
        if bundle is None or scores[tool] < PULL_RATIO * top:
            return []
        mates = self.members[bundle]
        if len(mates) > PULL_MAX_BUNDLE:
            return []
        return [m for m in mates if m != tool and scores[m] > PULL_FLOOR]

    def close_mates(
        self, tools: Sequence[int], scores: NDArray[np.float64], floor: float, skip: set[int]
    ) -> list[int]:
        """Bundle-mates of ``tools`` scoring at least ``floor``, best first, none in ``skip``."""
        seen, out = set(skip) | set(tools), []
        for tool in tools:
            bundle = self.of[tool]
            for m in self.members.get(bundle, ()) if bundle is not None else ():
                if m not in seen and scores[m] >= floor:
                    seen.add(m)
                    out.append(m)
        return sorted(out, key=lambda m: -float(scores[m]))
