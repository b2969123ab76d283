"""An answer's places count distinct tools: exact twins share one place.

Real MCP servers register aliases (the Wikipedia server lists ``get_article`` and
``wikipedia_get_article`` with the same description and schema). Ranked apart, a pair of twins
takes two of a ``load_tools`` answer's few places with one job, and the model may call either
name; so a twin rides along with the tool it doubles and the place goes to the next distinct
tool. Twins are :func:`~tooltray.memory.retrieval.twins.twin_key`'s exact ones only; near twins
are different tools. Measurements: ``bench/README.md`` (issue 35, "search, stop 40").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tooltray.memory.retrieval.twins import exact_twins
from tooltray.tools.spec import ToolSpec


class Twins:
    """Each tool's exact twins in one catalog (catalog positions)."""

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        self.of: dict[int, tuple[int, ...]] = {}
        for group in exact_twins(specs):
            for i in group:
                self.of[i] = tuple(j for j in group if j != i)

    def doubles(self, order: Sequence[int]) -> int:
        """How many tools of ``order`` are twins of a tool before them."""
        seen: set[int] = set()
        count = 0
        for i in order:
            count += i in seen
            seen.update(self.of.get(i, ()))
        return count

    def places(self, order: Sequence[int], k: int, ok: Callable[[int], bool]) -> list[int]:
        """The first ``k`` distinct tools of ``order``, each followed by its twins that ``ok``
        allows (a twin later in ``order`` takes no place of its own)."""
        out: list[int] = []
        placed = 0
        for i in order:
            if i in out:
                continue
            if placed >= k:
                break
            placed += 1
            out += [i, *(j for j in self.of.get(i, ()) if j not in out and ok(j))]
        return out
