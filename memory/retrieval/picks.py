"""What loads: the calibrated bar, each sentence's best tools, bundle-mates; reserved places.

The bar a tool must clear is relative, never an absolute cosine: ``max(2, 0.5 x top)`` on the
fused z-scale, where ``top`` is the query's best fused score, plus the best 3 when they stand
above the catalog mean. A fixed z-bar depends on the catalog's size: the best matches of a
2-4k-tool catalog sit 8-11 deviations out, those of a 130-tool one 4-5, so ``z >= 4`` picks 15
tools a query in sealtools and 3 in bfcl_multiturn (recall 78%). The 0.5 ratio keeps 4-12 picks
on every catalog at about 1k tokens; below it each extra point of recall costs more tokens than the
``load_tools`` escape hatch does (``bench/README.md`` has the measurements).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.retrieval.bundles import Bundles
from tooltray.memory.retrieval.ranking import TieBreak
from tooltray.memory.tuning import BAR_FLOOR, BAR_RATIO, MIN_PICKS, SENTENCE_RATIO, SENTENCE_TOP

Scores = NDArray[np.float64]


def bar(top: float) -> float:
    """The score a tool must reach, given the query's best score."""
    return max(BAR_FLOOR, BAR_RATIO * top)


def over_bar(order: Sequence[int], final: Scores) -> list[int]:
    """The ranked tools that clear the bar, and at least the best 3 above the catalog mean."""
    if not order:
        return []
    line = bar(float(final[order[0]]))
    return [i for r, i in enumerate(order) if final[i] >= line or (r < MIN_PICKS and final[i] > 0)]


def sentence_best(
    sentences: Scores,
    final: Scores,
    ties: TieBreak,
    text: str,
    have: Sequence[int] = (),
    per: int = SENTENCE_TOP,
) -> list[int]:
    """Each sentence's best ``per`` tools over ``max(2, 0.85 x`` its top), not in ``have``."""
    seen, out = set(have), []
    for row in sentences:
        line = max(BAR_FLOOR, SENTENCE_RATIO * float(row.max()))
        for i in ties.top(row, per, text):
            if row[i] >= line and i not in seen and np.isfinite(final[i]):
                seen.add(i)
                out.append(i)
    return out


def choose(
    final: Scores, sentence_rows: Sequence[Scores], ties: TieBreak, text: str, k: int
) -> tuple[list[int], list[int]]:
    """The pick rule: ``(main, chosen)`` for the scores ``final`` of a query or conversation.

    ``main`` is the ranked tools over the bar (:func:`over_bar`); ``chosen`` adds each row's
    best tools of ``sentence_rows`` (:func:`sentence_best`, in order, up to ``k // 2`` of
    them), keeping them under the cap of ``k`` before ``main``'s tail. No ``main``, no pick.
    """
    main = over_bar(ties.top(final, k, text), final)
    if not main or k < 1:
        return main, []
    extra: list[int] = []
    for rows in sentence_rows:
        extra += sentence_best(rows, final, ties, text, main + extra)
    extra = extra[: k // 2]
    return main, main[: k - len(extra)] + extra


def mates(chosen: Sequence[int], final: Scores, bundles: Bundles) -> list[int]:
    """Bundle-mates the chosen tools pull in (strong matches in small bundles only)."""
    if not chosen:
        return []
    top = float(max(final[i] for i in chosen))
    seen, out = set(chosen), []
    for i in chosen:
        for m in bundles.pull_in(i, final, top):
            if m not in seen and np.isfinite(final[m]):
                seen.add(m)
                out.append(m)
    return out


def reserve(order: list[int], wanted: Sequence[int], final: Scores, k: int) -> list[int]:
    """``order`` cut to ``k`` with places kept for ``wanted``, best score first."""
    missing = [i for i in wanted if i not in order]
    if not missing or k < 1:
        return order[:k]
    kept = order[: max(k - len(missing), 0)] + missing[:k]
    rank = {i: r for r, i in enumerate(order)}
    return sorted(kept, key=lambda i: (-float(final[i]), rank.get(i, k)))
