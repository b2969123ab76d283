"""The bundle menu: one line per bundle, so a model can ask for tools it was not shown.

A bundle's line is its description; a catalog without descriptions (most imported ones) gets the
most telling words of the members' names instead of a line that says nothing, so the model can
still tell ``git`` from ``calendar``. Every call pays the menu, so it has a token budget: a
catalog of many bundles (a hundred MCP servers) names them all on one line and gives lines to its
largest ones while the budget lasts; past a few hundred, it names the ones that fit (those the
deployment's sessions used first; without a record, its generic tools' servers) and points to
``load_tools({"query": ...})`` for the rest (every bundle still loads by name); the used ones'
names alone may price lower.
Everything is deterministic: the prefix stays byte-stable.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from functools import lru_cache

from tooltray.memory.tuning import MENU_BUDGET, MENU_WORDS
from tooltray.tools.render import count_tokens
from tooltray.tools.spec import Bundle

_STOP_WORDS = frozenset("a an and as at by for from in is of on or the to with".split())


MENU_HEADER = "Tool bundles for load_tools:"
MORE_NAMES = "- also: "
MORE_HINT = '+{n} more bundles: load_tools({{"query": "<what you need>"}}) finds their tools.'
LIST_HINT = 'Tool bundles: load_tools({"tools": ["*"]}) lists them; load one by its name.'
"""What the prefix shows instead of a menu that costs more than listing the bundles on demand
(:func:`~tooltray.memory.core.policy.menu_pays`)."""


def bundle_menu(
    bundles: Sequence[Bundle], budget: int | None = None, used: Sequence[str] = ()
) -> str:
    """One line per bundle: the escape-hatch menu that lets a model ask for tools.

    Every call of a selected session pays the menu, so a line is only what a model chooses by:
    the bundle's name and what it is for (member counts and a longer header cost ~35 tokens a
    call on apibank's 8 bundles and told the model nothing it acts on). A menu over ``budget``
    o200k tokens (default ``MENU_BUDGET``) is cut by :func:`budgeted`, so what every call pays
    stays bounded however many servers a catalog has; the bundles the deployment ``used``
    (most used first) keep their names there before any other."""
    if not bundles:
        return ""
    lines = _lines(tuple(bundles))
    menu = "\n".join([MENU_HEADER, *sorted(lines.values())])
    limit = MENU_BUDGET if budget is None else budget
    return menu if count_tokens(menu).n <= limit else budgeted(bundles, lines, limit, used)


def used_menu(bundles: Sequence[Bundle], used: Collection[str]) -> str:
    """The names of the bundles a deployment ``used`` alone, and how many more there are: on a
    catalog of hundreds of servers, its sessions' needs fall on a few (mcp300: 20 of 300), so
    the record's names can cost a fifth of the budgeted menu's and miss little
    (:func:`~tooltray.memory.core.policy.unnamed` prices what they miss)."""
    names = sorted(b.name for b in bundles if b.name in used)
    return _compose([MENU_HEADER], names, len(bundles) - len(names))


@lru_cache(maxsize=8)
def names_all(bundles: tuple[Bundle, ...]) -> bool:
    """Whether the menu within budget names every bundle (nothing to put first in it)."""
    return len(listed(bundle_menu(bundles))) >= len(bundles)


def listed(menu: str) -> set[str]:
    """The bundle names ``menu`` shows (on a line of their own or on the names line)."""
    names: set[str] = set()
    for line in menu.splitlines():
        if line.startswith(MORE_NAMES):
            names |= set(line.removeprefix(MORE_NAMES).split(", "))
        elif line.startswith("- "):
            names.add(line[2:].split(": ", 1)[0])
    return names


@lru_cache(maxsize=8)
def _lines(bundles: tuple[Bundle, ...]) -> dict[str, str]:
    """Each bundle's line, by name (read only: cached, since a menu decision builds the same
    lines twice and a long-lived process decides again every ``MENU_RENEW`` boundaries)."""
    spread = _word_spread(bundles)
    return {b.name: _line(b, spread, len(bundles)) for b in bundles}


def _line(bundle: Bundle, spread: dict[str, int], total: int) -> str:
    desc = " ".join(bundle.description.split()) or member_words(bundle, spread, total)
    return f"- {bundle.name}: {desc}"


def rank(bundles: Sequence[Bundle]) -> list[Bundle]:
    """Bundles by the chance a session needs one: with no usage known, a need is as likely to
    fall on any tool, so a bundle counts by its members (ties by name, for a stable order)."""
    return sorted(bundles, key=lambda b: (-len(b.members), b.name))


def budgeted(
    bundles: Sequence[Bundle], lines: dict[str, str], budget: int, used: Sequence[str] = ()
) -> str:
    """The menu within ``budget`` tokens: first every bundle's name on one line (or, when not all
    fit, as many as fit: the ``used`` ones first, then the shortest, and how many more there
    are), then lines for the top-ranked bundles while the budget lasts.

    Names first: a model names a server it sees in the menu (3-5 tokens each) and is sent to
    ``load_tools({"query": ...})`` for one it does not, which may miss; a line (15-20 tokens)
    only tells it more about a server it could already name. The servers a deployment's
    sessions used are the ones its next sessions name (mcp300: 20 of 300 servers carry every
    need, and the shortest-first cut named 11 of them)."""
    names = _first(used, sorted((b.name for b in bundles), key=lambda n: (count_tokens(n).n, n)))
    menu, shown = _fit([MENU_HEADER], names, budget)
    if shown < len(names):
        return menu
    full: list[Bundle] = []
    for b in rank(bundles):
        trial = _with_lines([*full, b], names, lines)
        if count_tokens(trial).n > budget:
            break
        full.append(b)
        menu = trial
    return menu


def _first(used: Sequence[str], names: list[str]) -> list[str]:
    """``names`` with those in ``used`` first, in ``used``'s order."""
    known = set(names)
    ahead = [n for n in dict.fromkeys(used) if n in known]
    return ahead + [n for n in names if n not in set(ahead)]


def _with_lines(full: Sequence[Bundle], names: Sequence[str], lines: dict[str, str]) -> str:
    """Lines for ``full``, every other name on the names line."""
    inline = {b.name for b in full}
    head = [MENU_HEADER, *sorted(lines[b.name] for b in full)]
    return _compose(head, [n for n in names if n not in inline], 0)


def _fit(head: list[str], rest: list[str], budget: int) -> tuple[str, int]:
    """``head`` then as many of ``rest`` as fit on a names line, then the count left out (the
    most names within ``budget``: the tokens grow with the names shown, so bisect); and how
    many names it shows."""
    lo, hi = 0, len(rest)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(_compose(head, rest[:mid], len(rest) - mid)).n <= budget:
            lo = mid
        else:
            hi = mid - 1
    return _compose(head, rest[:lo], len(rest) - lo), lo


def _compose(head: list[str], names: list[str], left: int) -> str:
    lines = list(head)
    if names:
        lines.append(MORE_NAMES + ", ".join(sorted(names)))
    if left:
        lines.append(MORE_HINT.format(n=left))
    return "\n".join(lines)


@lru_cache(maxsize=1 << 16)
def _words(name: str) -> tuple[str, ...]:
    """The words of a tool or bundle name; cached, since a menu decision reads every member's
    name several times (mcp300's 6,295 names, 127k reads: most of a 240 ms decision)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    words = re.split(r"[^A-Za-z0-9]+", spaced.lower())
    return tuple(w for w in words if len(w) > 1 and w not in _STOP_WORDS)


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
