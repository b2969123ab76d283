"""Generic tools: the ones any task may need without naming them (code, a shell, files, fetch).

A deployment's record learns them (usage priors) and the ``implicit`` setting declares them, but
a never-seen catalog has neither, and that is where sessions miss them: of the 99 tools a
frontier model's sessions over 70 real MCP servers needed beyond the opening, 91 came from
servers the task never named (a filesystem, a shell, fetch; issue 35). Each phrase of
:data:`GENERIC_CAPABILITIES` names the catalog tool its vector is nearest to, where that tool
stands out (:data:`GENERIC_MIN`, :data:`GENERIC_Z`): a boundary candidate at
:data:`GENERIC_CHANCE`, priced like any pick, until the record has sessions enough to say more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.embedders.base import dot_rows
from tooltray.memory.tuning import GENERIC_CAPABILITIES, GENERIC_MIN, GENERIC_Z

Embed = Callable[[str], "NDArray[np.float32] | None"]
"""A phrase's vector in the catalog's embedding space (``None``: no embedder)."""


def generic_tools(
    vectors: NDArray[np.float32], names: Sequence[str], embed: Embed
) -> dict[str, str]:
    """Tool name -> the capability phrase it serves best: per phrase, the nearest tool, kept
    where its cosine reaches :data:`GENERIC_MIN` and stands :data:`GENERIC_Z` standard
    deviations over the catalog's mean (a catalog without such a tool keeps none)."""
    out: dict[str, str] = {}
    for phrase in GENERIC_CAPABILITIES if len(names) > 1 else ():
        vector = embed(phrase)
        if vector is None:
            return {}
        cosines = dot_rows(vectors, vector)[0]
        best = int(np.argmax(cosines))
        spread = float(cosines.std()) or 1.0
        top = float(cosines[best])
        if top >= GENERIC_MIN and (top - float(cosines.mean())) / spread >= GENERIC_Z:
            out.setdefault(names[best], phrase)
    return out
