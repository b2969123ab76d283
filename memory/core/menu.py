"""The bundle menu: one line per bundle, so a model can ask for tools it was not shown.

A bundle's line is its description; a catalog without descriptions (most imported ones) gets the
most telling words of the members' names instead of a line that says nothing, so the model can
still tell ``git`` from ``calendar``. Every line is deterministic: the prefix stays byte-stable.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from tooltray.memory.tuning import MENU_WORDS
from tooltray.tools.spec import Bundle

_STOP_WORDS = frozenset("a an and as at by for from in is of on or the to with".split())


MENU_HEADER = "Tool bundles for load_tools:"


def bundle_menu(bundles: Sequence[Bundle]) -> str:
    """One line per bundle: the escape-hatch menu that lets a model ask for tools.

    Every call of a selected session pays the menu, so a line is only what a model chooses by:
    the bundle's name and what it is for (member counts and a longer header cost ~35 tokens a
    call on apibank's 8 bundles and told the model nothing it acts on)."""
    if not bundles:
        return ""
    spread = _word_spread(bundles)
    lines = [MENU_HEADER]
    for b in sorted(bundles, key=lambda b: b.name):
        desc = " ".join(b.description.split()) or member_words(b, spread, len(bundles))
        lines.append(f"- {b.name}: {desc}")
    return "\n".join(lines)


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    words = re.split(r"[^A-Za-z0-9]+", spaced.lower())
    return [w for w in words if len(w) > 1 and w not in _STOP_WORDS]


def _word_counts(bundle: Bundle) -> dict[str, int]:
    """How many members of ``bundle`` use each word of their names (catalog order kept)."""
    counts: dict[str, int] = {}
    for member in bundle.members:
        for word in dict.fromkeys(_words(member)):
            counts[word] = counts.get(word, 0) + 1
    return counts


def _word_spread(bundles: Sequence[Bundle]) -> dict[str, int]:
    """In how many bundles each member-name word occurs."""
    spread: dict[str, int] = {}
    for b in bundles:
        for word in _word_counts(b):
            spread[word] = spread.get(word, 0) + 1
    return spread


def member_words(bundle: Bundle, spread: dict[str, int] | None = None, total: int = 1) -> str:
    """A menu line for an undescribed bundle: the most telling words of its members' names.

    A bundle of up to three tools lists their names. Otherwise words of the bundle's own name,
    and words every member shares (a common prefix), tell the model nothing; the rest rank by
    tf-idf (members using the word, against the bundles whose members use it, so ``get`` or
    ``set`` sink), ties in catalog order: short, and the same on every run.
    """
    if len(bundle.members) <= 3:
        return ", ".join(bundle.members) or "tools of this group"
    own = set(_words(bundle.name))
    counts = _word_counts(bundle)
    kept = [w for w in counts if w not in own and counts[w] != len(bundle.members)]
    spread = spread or {}

    def score(word: str) -> float:
        return -counts[word] * math.log((1 + total) / spread.get(word, 1))

    ranked = sorted(kept, key=score)[:MENU_WORDS]
    if not ranked:
        return "tools of this group"
    return ", ".join(ranked) + (", ..." if len(kept) > MENU_WORDS else "")
