"""What a model's ``load_tools`` query asks for: the shapes models write, read apart.

Models write keywords, whole sentences, ``server: <kind of server>\\ntool: <what it does>`` and
guessed tool names (``get_stock_price``). Ranked as one text, the server line's words match
every tool of that server equally and push the tool line's words down, and a guessed name is
one opaque token to the embedder. So the server line picks the bundles the answer comes from
(fuzzy, by name: models spell servers their own way), the tool line ranks within them, and a
guessed name is ranked by its words and put first when it is a real tool's name near enough
(with or without its server prefix). An order with a purpose (``run python code to read a
pdf``) asks for the tool that does the order: the purpose's words (``read``, ``pdf``) would
rank the tools that do the purpose, so they only join at a share. A server line that names no
bundle is a kind of server (``code execution sandbox (run Python code)``, the line frontier
models write when they know no server names): each server's best match for it lifts all its
tools, so the tool line ranks within the servers of that kind first. Measurements:
``bench/README.md`` (issue 35).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import cached_property

from tooltray.memory.retrieval.scoring import tokenize_identifier

#: words that name no particular server (``the git mcp server`` is ``git``)
GENERIC = frozenset({"mcp", "server", "servers", "the", "a", "an", "api", "tool", "tools"})
#: a server line must match a bundle at least this well (token overlap or spelling ratio)
SERVER_MATCH = 0.75
#: a guessed name at least this close to a real tool name is that tool
NAME_MATCH = 0.86

_FIELD = re.compile(r"(?im)^\s*(server|mcp|tool|function|action)\s*[:=]\s*(.*?)\s*$")
_INLINE = re.compile(r"(?is)^\s*server\s*[:=]\s*(.+?)[\s,;]+tool\s*[:=]\s*(.+)$")
#: verbs an order opens with and a purpose clause follows ``to`` with (``run code to parse``)
VERBS = frozenset(
    """run execute exec call invoke use read write save open load fetch get find search list
    query create make build generate convert extract parse analyze analyse count compute calculate
    check inspect process filter sort summarize summarise compare plot draw render print test
    verify validate download upload send post scan look fix clean merge split format""".split()
)
_PURPOSE = re.compile(r"(?is)^\s*(\w+\b.*?)\s+to\s+(\w+\b.*)$")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:(?:__|[_.\-])[A-Za-z0-9]+|[a-z0-9][A-Z][a-z0-9]*)+$")


@dataclass(frozen=True)
class Ask:
    """One ``load_tools`` query read apart.

    Attributes:
        text: what ranks the tools (the tool line, a guessed name's words, or the query).
        purpose: what an order's result is for (``run code to <purpose>``): ranks at a share.
        kind: a server line naming no bundle (``code execution sandbox``): its servers rank.
        bundles: the bundles a server line names (empty: the whole catalog).
        named: real tool names a guessed name spells, closest first.
    """

    text: str
    bundles: tuple[str, ...] = ()
    named: tuple[str, ...] = field(default=())
    purpose: str = ""
    kind: str = ""


def purpose_split(text: str) -> tuple[str, str]:
    """``run python code to read a pdf`` -> (``run python code``, ``read a pdf``): an order
    (its first word a verb of :data:`VERBS`) and what it is for (``to`` and a verb); any other
    text is its own order (``convert coordinates to an address``, ``I want to check ...``)."""
    found = _PURPOSE.match(text)
    if not found or "\n" in text.strip():
        return text, ""
    order, purpose = found.groups()
    verbs = [w.lower() for w in (order.split()[0], purpose.split()[0])]
    return (order, purpose) if all(w in VERBS for w in verbs) else (text, "")


def words(text: str) -> list[str]:
    """Lower-case words of a name or phrase, generic words (``mcp``, ``server``) dropped."""
    out = [w for w in tokenize_identifier(re.sub(r"[^A-Za-z0-9]+", " ", text)) if w]
    return [w for w in out if w not in GENERIC]


def closeness(a: str, b: str) -> float:
    """How alike two names or phrases are: word overlap or spelling, whichever is higher."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 0.0
    overlap = len(set(wa) & set(wb)) / len(set(wa) | set(wb))
    return max(overlap, SequenceMatcher(None, "".join(wa), "".join(wb)).ratio())


def match_bundles(server: str, bundles: Collection[str]) -> tuple[str, ...]:
    """The bundles ``server`` names (all those as close as the best one), or none."""
    scored = {b: closeness(server, b) for b in bundles}
    best = max(scored.values(), default=0.0)
    if best < SERVER_MATCH:
        return ()
    return tuple(b for b, s in scored.items() if s >= best - 1e-9)


def spelled(guess: str, forms: Sequence[tuple[str, str, frozenset[str]]]) -> tuple[str, ...]:
    """Tool names ``guess`` spells, either of them with or without its server prefix
    (``mcp__git__git_log``, ``git_log``, ``log``), closest first; ``forms`` from
    :func:`name_forms`."""
    g = "_".join(words(guess))
    found: list[tuple[float, str]] = []
    for name, server, spellings in forms:
        ratio = _likeness({g, _bare(g, server)}, spellings)
        if ratio >= NAME_MATCH:
            found.append((ratio, name))
    return tuple(n for _, n in sorted(found, key=lambda x: -x[0]))


def name_forms(
    names: Sequence[str], bundle_of: Mapping[str, str | None]
) -> tuple[tuple[str, str, frozenset[str]], ...]:
    """Per tool: its name, its server's words and the spellings a guess may match (with and
    without the server prefix). Read once per catalog, not per query: a guess is compared with
    every tool."""
    out = []
    for name in names:
        server = "_".join(words(bundle_of.get(name) or ""))
        out.append((name, server, frozenset({"_".join(words(name)), _bare(name, server)})))
    return tuple(out)


def _likeness(guesses: set[str], forms: frozenset[str]) -> float:
    best = 0.0
    for a in guesses:
        for b in forms:
            match = SequenceMatcher(None, a, b)
            if match.real_quick_ratio() >= NAME_MATCH and match.quick_ratio() >= NAME_MATCH:
                best = max(best, match.ratio())
    return best


def _bare(name: str, server: str) -> str:
    """``name`` without a leading ``server`` (both as lower-case words joined by ``_``)."""
    joined = "_".join(words(name))
    if server and joined.startswith(server + "_"):
        return joined[len(server) + 1 :]
    return joined


def _fields(query: str) -> dict[str, str]:
    inline = _INLINE.match(query)
    if inline and "\n" not in query.strip():
        return {"server": inline.group(1), "tool": inline.group(2)}
    out: dict[str, str] = {}
    for key, value in _FIELD.findall(query):
        kind = "server" if key.lower() in ("server", "mcp") else "tool"
        out[kind] = f"{out.get(kind, '')} {value}".strip()
    return out


class Asks:
    """The query reader of one catalog (``names``, each tool's bundle in ``bundle_of``): the
    bundles and the tools' spellings are read once, each query against them."""

    def __init__(self, names: Sequence[str], bundle_of: Mapping[str, str | None]) -> None:
        self.names, self.bundle_of = names, bundle_of
        self.bundles = {b for b in bundle_of.values() if b}

    @cached_property
    def forms(self) -> tuple[tuple[str, str, frozenset[str]], ...]:
        """The tools' spellings, read on the first guessed name (most queries are not one)."""
        return name_forms(self.names, self.bundle_of)

    def read(self, query: str) -> Ask:
        """``query`` read apart over the catalog."""
        fields = _fields(query)
        if "server" in fields:
            server = fields["server"]
            chosen = match_bundles(server, self.bundles)
            rest, purpose = purpose_split(fields.get("tool", ""))
            if chosen and rest:
                return Ask(rest, chosen, purpose=purpose)
            kind = server if rest and not chosen else ""
            return Ask(f"{server} {rest}".strip() or query, chosen, purpose=purpose, kind=kind)
        stripped = query.strip()
        if _NAME.match(stripped):
            return Ask(" ".join(words(stripped)) or stripped, (), spelled(stripped, self.forms))
        if " to " not in stripped.lower():  # most queries: no purpose to read (trace)
            return Ask(query)
        order, purpose = purpose_split(stripped)
        return Ask(order if purpose else query, purpose=purpose)


def read_ask(query: str, names: Sequence[str], bundle_of: Mapping[str, str | None]) -> Ask:
    """``query`` read apart over a catalog (``names``, each tool's bundle in ``bundle_of``)."""
    return Asks(names, bundle_of).read(query)
