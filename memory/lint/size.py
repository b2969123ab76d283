"""Schema-size outliers: one tool far larger than the catalog's usual tool, in tokens.

Sizes are compared on a log scale with a robust z (median and MAD), so one huge schema cannot
hide itself by inflating the spread, and a catalog of uniformly long tools flags nothing.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from tooltray.tools.finding import Finding
from tooltray.tools.render import tokens_per_tool
from tooltray.tools.spec import ToolSpec

KIND = "schema-size"
MIN_TOOLS = 5
ROBUST_Z = 3.5
MIN_RATIO = 3.0
MAD_FLOOR = 0.1  # log units; keeps near-identical sizes from making tiny gaps "outliers"


def robust_z(values: Sequence[float]) -> list[float]:
    """``0.6745 (x - median) / MAD`` for each value (MAD floored at :data:`MAD_FLOOR`)."""
    middle = statistics.median(values)
    mad = max(statistics.median(abs(v - middle) for v in values), MAD_FLOOR)
    return [0.6745 * (v - middle) / mad for v in values]


def size_findings(tools: Sequence[ToolSpec], path: str = "openai") -> list[Finding]:
    """Tools at least :data:`ROBUST_Z` above the catalog on log tokens and 3x the median."""
    if len(tools) < MIN_TOOLS:
        return []
    counts = tokens_per_tool(tools, path)
    sizes = [max(counts[t.name], 1) for t in tools]
    median = statistics.median(sizes)
    found = []
    for spec, size, z in zip(tools, sizes, robust_z([math.log(s) for s in sizes]), strict=True):
        if z >= ROBUST_Z and size >= MIN_RATIO * median:
            found.append(
                Finding(
                    KIND,
                    "warning",
                    (spec.name,),
                    f"{size:,} tokens vs catalog median {median:,.0f} (robust z {z:.1f} on "
                    "log tokens)",
                    "shorten the description, move long enums or examples out, or split it",
                )
            )
    return found
