"""An answer's places count distinct tools: a server's aliases share one place.

Real MCP servers register aliases (the Wikipedia server lists ``get_article`` and
``wikipedia_get_article`` with the same description and schema). Ranked apart, a pair of twins
takes two of a ``load_tools`` answer's few places with one job, and the model may call either
name; so a twin rides along with the tool it doubles and the place goes to the next distinct
tool. Twins here are aliases: the same description and schema
(:func:`~tooltray.memory.retrieval.twins.twin_key`) and the same name once the server's prefix
are stripped. Two tools sharing a pasted description under different names (API-Bank's
``DeleteReminder`` and ``ModifyReminder``) are different tools, and so are near twins.
Measurements: ``bench/README.md`` (issue 35, "search, stop 40").
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from tooltray.memory.retrieval.asks import words
from tooltray.memory.retrieval.twins import exact_twins
from tooltray.tools.spec import ToolSpec


def alias(spec: ToolSpec) -> tuple[str, ...]:
    """The words of a tool's name that are not its server's (``wikipedia_get_article`` of
    ``wikipedia`` is ``get article``, and so is ``wikipedia_wikipedia_get_article``)."""
    server = set(words(spec.bundle or ""))
    return tuple(w for w in words(spec.name) if w not in server)


class Twins:
    """Each tool's aliases in one catalog (catalog positions)."""

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        self.names = [s.name for s in specs]
        self.position = {n: i for i, n in enumerate(self.names)}
        self.of: dict[int, tuple[int, ...]] = {}
        for group in exact_twins(specs):
            for i in group:
                same = [j for j in group if j != i and alias(specs[j]) == alias(specs[i])]
                self.of.update({i: tuple(same)} if same else {})

    def beside(self, names: Collection[str]) -> set[str]:
        """``names`` and their twins' names: a twin of a loaded tool is loaded in all but name,
        so a search gives it no place either."""
        out = set(names)
        for name in names if self.of else ():
            out.update(self.names[j] for j in self.of.get(self.position.get(name, -1), ()))
        return out

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
