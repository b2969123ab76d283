"""What retrieval proposes to the selection: a tool name, why it came up and how strongly.

The selector turns index hits into candidates; the core's selection rules admit them in order
within the caps, whatever produced them (retrieval, CORE, skills, a ``load_tools`` call).
"""

from __future__ import annotations

from dataclasses import dataclass

from tooltray.memory.store.records import Source

ALWAYS: tuple[Source, ...] = ("core", "pinned")
"""Sources that are always loaded, outside every cap, and never unloaded."""


@dataclass(frozen=True)
class Candidate:
    """A tool proposed for the loaded set, with why (``source``) and how strongly (``score``)."""

    name: str
    source: Source
    score: float | None = None
