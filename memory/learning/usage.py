"""Usage priors: how often a deployment's sessions use each tool and server, whatever they say.

Generic servers (a filesystem's ``write_file``, ``fetch``, a shell's ``run_command``) serve tasks
whose messages never name them, so no similarity to the message finds them. The share of past
sessions that used a tool is then the best estimate of its chance of being needed in the next
one: a boundary offers it as a candidate with that chance, and the opening's pricing holds it
when the chance times an escape outweighs its tokens, like any other pick.

The ``implicit`` setting declares such tools where there is no history yet (a tool, a bundle,
``server/tool`` or a pattern). Unlike a pin (always loaded, outside the caps), a declared tool is
a candidate with a chance of :data:`IMPLICIT_CHANCE`, shared among a bundle entry's tools, which
the pricing may still leave out; learned shares raise it where history says more.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.embedders.base import dot_rows
from tooltray.memory.retrieval.scoring import Candidate
from tooltray.memory.tuning import (
    GENERIC_CHANCE,
    IMPLICIT_CHANCE,
    USAGE_MIN_CHANCE,
    USAGE_MIN_SESSIONS,
    USAGE_MIN_USES,
    USAGE_PSEUDO,
    needed,
)
from tooltray.tools.errors import ConfigError
from tooltray.tools.spec import ToolSpec

BundleOf = Mapping[str, "str | None"]
"""A tool name -> its bundle (the MCP server it comes from), ``None`` for a tool without one."""


@dataclass(frozen=True)
class Usage:
    """Past sessions' tool use: per session, its decay weight and the tools it used; read with
    :class:`Explained`, also the tools its requests found (``found``) and, of those, the ones
    it used (``hits``): what a found tool's :func:`found_priors` count."""

    weights: tuple[float, ...] = ()
    tools: tuple[frozenset[str], ...] = ()
    found: tuple[frozenset[str], ...] = ()
    hits: tuple[frozenset[str], ...] = ()

    @property
    def sessions(self) -> int:
        """How many past sessions the shares are over."""
        return len(self.weights)

    @cached_property
    def uses(self) -> dict[str, float]:
        """Tool -> decayed count of the sessions that used it (before any shrinkage)."""
        return _counts(self.weights, self.tools)

    @cached_property
    def shares(self) -> dict[str, float]:
        """Tool -> weighted share of the sessions that used it, shrunk by :data:`USAGE_PSEUDO`
        (empty under :data:`USAGE_MIN_SESSIONS` sessions)."""
        return self._shares(lambda tools: tools)

    @cached_property
    def when_found(self) -> dict[str, tuple[float, float]]:
        """Tool -> decayed counts of (sessions whose request found it and used it, sessions
        whose request found it)."""
        found, hits = _counts(self.weights, self.found), _counts(self.weights, self.hits)
        return {tool: (hits.get(tool, 0.0), seen) for tool, seen in found.items()}

    @cached_property
    def used(self) -> tuple[frozenset[str], ...]:
        """Per session, every tool it used (read with :class:`Explained`, ``tools`` holds the
        misses alone and ``hits`` the rest)."""
        if not self.hits:
            return self.tools
        return tuple(a | b for a, b in zip(self.tools, self.hits, strict=True))

    def within(self, bundle_of: BundleOf) -> dict[str, tuple[str, float]]:
        """Tool -> its server and its share as a mate: of the past sessions that used another
        of the server's tools, the share that used it too (shrunk by :data:`USAGE_PSEUDO`), for
        each tool :data:`USAGE_MIN_USES` such sessions used: which of a server's tools a
        session that needs the server for another tool will call.

        A session that used the tool as its server's only one says nothing about it as a mate:
        it is the server's alternative there (one scheduling tool per request), which the
        message's own scores choose. The bar counts sessions, not their decayed weight: the
        shrunk share already weighs thin or old evidence, and two sessions a few turns old
        would otherwise weigh 1.99 and never pass."""
        if self.sessions < USAGE_MIN_SESSIONS:
            return {}
        homes = [Counter(bundle_of.get(t) for t in used) for used in self.used]
        lone = [
            {t for t in u if h[bundle_of.get(t)] == 1}
            for u, h in zip(self.used, homes, strict=True)
        ]
        beside = [used - alone for used, alone in zip(self.used, lone, strict=True)]
        by_server = _counts(self.weights, [{b for b in h if b} for h in homes])
        alone, mates = _counts(self.weights, lone), _counts(self.weights, beside)
        backed = _counts((1.0,) * self.sessions, beside)
        return {
            tool: (server, uses / (by_server[server] - alone.get(tool, 0.0) + USAGE_PSEUDO))
            for tool, uses in mates.items()
            if backed[tool] >= USAGE_MIN_USES and (server := bundle_of.get(tool)) in by_server
        }

    def servers_found(self, bundle_of: BundleOf) -> dict[str, float]:
        """Server -> the share of the past sessions whose request found one of its tools that
        used one of them (shrunk by :data:`USAGE_PSEUDO`), where :data:`USAGE_MIN_USES` sessions
        back it: a found server's record, as :func:`found_priors` keeps a found tool's."""
        if self.sessions < USAGE_MIN_SESSIONS or not self.found:
            return {}
        found = [_servers(f, bundle_of) for f in self.found]
        used = [_servers(u, bundle_of) for u in self.used]
        seen = _counts(self.weights, found)
        hits = _counts(self.weights, [f & u for f, u in zip(found, used, strict=True)])
        return {s: n / (seen[s] + USAGE_PSEUDO) for s, n in hits.items() if n >= USAGE_MIN_USES}

    def novel(self, bundle_of: BundleOf) -> float:
        """The weighted share of past sessions that used a server no other past session used:
        how often the next session needs a server this record has not seen (1.0 under
        :data:`USAGE_MIN_SESSIONS` sessions: no record yet)."""
        if self.sessions < USAGE_MIN_SESSIONS:
            return 1.0
        homes = [_servers(u, bundle_of) for u in self.used]
        counts = Counter(b for home in homes for b in home)
        alone = [
            w
            for w, home in zip(self.weights, homes, strict=True)
            if any(counts[b] == 1 for b in home)
        ]
        return sum(alone) / max(sum(self.weights), 1e-9)

    def server_shares(self, bundle_of: BundleOf) -> dict[str, float]:
        """Server (bundle) -> weighted share of the sessions that used any of its tools."""
        return self._shares(lambda tools: _servers(tools, bundle_of))

    def _shares(self, keys: Callable[[frozenset[str]], Iterable[str]]) -> dict[str, float]:
        if self.sessions < USAGE_MIN_SESSIONS:
            return {}
        total = sum(self.weights) + USAGE_PSEUDO
        out = _counts(self.weights, [keys(tools) for tools in self.tools])
        return {key: used / total for key, used in out.items()}


def _servers(tools: Iterable[str], bundle_of: BundleOf) -> set[str]:
    """The servers (bundles) ``tools`` come from (a tool without one adds none)."""
    return {b for t in tools if (b := bundle_of.get(t))}


def _counts(weights: Sequence[float], sets: Sequence[Iterable[str]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for weight, names in zip(weights, sets or [()] * len(weights), strict=True):
        for name in names:
            out[name] = out.get(name, 0.0) + weight
    return out


def usage_of(
    sessions: Sequence[tuple[int, frozenset[str]]],
    newest: int,
    half_life: float,
    found: Sequence[tuple[frozenset[str], frozenset[str]]] = (),
) -> Usage:
    """:class:`Usage` of ``(newest learned id, tools used)`` per past session (and, given,
    ``(found, hits)`` per session); a session counts half after ``half_life`` learned turns
    since its last one, like the other learned signals."""
    weights = tuple(2.0 ** (-(newest - last) / half_life) for last, _ in sessions)
    tools = tuple(tools for _, tools in sessions)
    return Usage(weights, tools, tuple(f for f, _ in found), tuple(h for _, h in found))


@dataclass(frozen=True, eq=False)
class Explained:
    """Which tools a past request would have found itself: those among the ``top`` tools by
    dense similarity of the request's vector to the catalog's document ``vectors`` (``top`` is
    ``max_tools``, what a boundary may load). Its other used tools were misses: the only uses
    a usage prior counts."""

    position: Mapping[str, int]
    vectors: NDArray[np.float32]
    top: int

    def missed(
        self, requests: NDArray[np.float32], tools: Sequence[Sequence[str]]
    ) -> list[frozenset[str]]:
        """Per request (``(n, d)`` vectors), the used ``tools`` ranked below ``top`` for it (a
        tool outside the catalog counts; every one counts when the dimensions differ)."""
        found = self.found(requests) if requests.ndim == 2 else []
        if len(found) != len(tools):
            found = [frozenset()] * len(tools)
        pairs = zip(found, tools, strict=True)
        return [frozenset(t for t in used if t not in top) for top, used in pairs]

    @property
    def telling(self) -> bool:
        """Whether a find tells tools apart: the request's ``top`` holds at most half the
        catalog. On a catalog not much larger than ``top`` every request finds nearly every
        tool (a found tool's use is just its share of all sessions) and the message's picks
        hold a server's tools already: found priors and mates are for large catalogs."""
        return 2 * self.top <= len(self.vectors)

    def found(self, requests: NDArray[np.float32]) -> list[frozenset[str]]:
        """Per request (``(n, d)`` vectors), the catalog's tools ranked in its ``top`` (ties
        at the bar included; none when the dimensions differ)."""
        n = len(self.vectors)
        if requests.ndim != 2 or requests.shape[1] != self.vectors.shape[1] or self.top < 1:
            return [frozenset()] * (len(requests) if requests.ndim == 2 else 0)
        if self.top >= n:
            return [frozenset(self.position)] * len(requests)
        sims = dot_rows(self.vectors, requests)
        cut = np.partition(sims, n - self.top, axis=1)[:, n - self.top]
        names = self._names
        return [
            frozenset(names[i] for i in np.flatnonzero(row >= bar))
            for row, bar in zip(sims, cut, strict=True)
        ]

    @cached_property
    def _names(self) -> list[str]:
        out = [""] * len(self.vectors)
        for name, i in self.position.items():
            out[i] = name
        return out


@dataclass(frozen=True)
class Prior:
    """A tool's chance of being needed by any session, and where it comes from."""

    chance: float
    source: Literal["usage", "implicit"]
    sessions: int = 0
    server: str | None = None
    server_share: float | None = None
    found: tuple[float, float] | None = None
    capability: str | None = None

    def why(self) -> str:
        """The reason ``tooltray explain`` gives for a tool the prior loaded."""
        if self.capability is not None:
            return (
                f"generic capability {self.capability!r}, chance {self.chance:.2f} until the "
                'record has sessions (declare it in implicit, or set generic = "off")'
            )
        if self.source == "implicit":
            return f"declared implicit, chance {self.chance:.2f}"
        if self.found is not None:
            used, seen = self.found
            return (
                f"usage prior {self.chance:.2f}: used by {used:.1f} of the {seen:.1f} past "
                "sessions whose request found it"
            )
        text = f"usage prior {self.chance:.2f} over {self.sessions} sessions"
        if self.server is not None and self.server_share is not None:
            text += f"; server {self.server} {self.server_share:.2f}"
        return text


def priors(
    usage: Usage,
    declared: Mapping[str, float],
    bundle_of: BundleOf,
    *,
    priced: bool = False,
    generic: Mapping[str, str] | None = None,
) -> dict[str, Prior]:
    """Every tool whose learned share or declared chance reaches :data:`USAGE_MIN_CHANCE`, with
    the larger of the two, best first; for an opening that prices its picks (``priced``), also
    a share under it that :data:`USAGE_MIN_USES` sessions back (the price decides). Until the
    record has :data:`USAGE_MIN_SESSIONS` sessions, each ``generic`` tool (tool -> capability,
    :mod:`~tooltray.memory.learning.generic`) has at least :data:`GENERIC_CHANCE`."""
    learned, servers = usage.shares, usage.server_shares(bundle_of) if usage.shares else {}
    habit = {n for n, k in usage.uses.items() if k >= USAGE_MIN_USES} if priced and learned else ()
    guessed = (generic or {}) if usage.sessions < USAGE_MIN_SESSIONS else {}
    out: dict[str, Prior] = {}
    for name in {*learned, *declared, *guessed}:
        share, given = learned.get(name, 0.0), declared.get(name, 0.0)
        guess = GENERIC_CHANCE if name in guessed else 0.0
        low = max(share, given, guess) < USAGE_MIN_CHANCE and name not in habit
        if low or name not in bundle_of:
            continue
        if guess > max(given, share):
            out[name] = Prior(guess, "implicit", capability=guessed[name])
            continue
        if given > share:
            out[name] = Prior(given, "implicit")
            continue
        server = bundle_of.get(name)
        shared = servers.get(server) if server is not None else None
        out[name] = Prior(share, "usage", usage.sessions, server, shared)
    return dict(sorted(out.items(), key=lambda kv: (-kv[1].chance, kv[0])))


def found_priors(
    usage: Usage, found: Collection[str], bundle_of: BundleOf, *, priced: bool = False
) -> dict[str, Prior]:
    """The priors of the tools this request finds (``found``: :meth:`Explained.found`), from
    the past sessions whose request found them too: the share of those that used the tool,
    shrunk by :data:`USAGE_PSEUDO`, where :data:`USAGE_MIN_USES` decayed sessions back it.

    A found tool's own chance comes from its score against the message's best, whatever the
    deployment; its history says how often such a find was what the session needed (a
    filesystem's ``read_file`` under a file request, nearly always; a look-alike server's
    tool it outranks, never). An unpriced opening keeps :data:`USAGE_MIN_CHANCE`."""
    if usage.sessions < USAGE_MIN_SESSIONS:
        return {}
    floor = 0.0 if priced else USAGE_MIN_CHANCE
    out: dict[str, Prior] = {}
    for name in found:
        used, seen = usage.when_found.get(name, (0.0, 0.0))
        chance = used / (seen + USAGE_PSEUDO)
        if used >= USAGE_MIN_USES and chance >= floor and name in bundle_of:
            server = bundle_of.get(name)
            out[name] = Prior(chance, "usage", usage.sessions, server, found=(used, seen))
    return dict(sorted(out.items(), key=lambda kv: (-kv[1].chance, kv[0])))


def merged(*parts: Mapping[str, Prior]) -> dict[str, Prior]:
    """Every tool of ``parts`` with its largest prior, best first."""
    out: dict[str, Prior] = {}
    for part in parts:
        for name, prior in part.items():
            if name not in out or prior.chance > out[name].chance:
                out[name] = prior
    return dict(sorted(out.items(), key=lambda kv: (-kv[1].chance, kv[0])))


def usual(picks: Sequence[Candidate], known: Mapping[str, Prior]) -> list[Candidate]:
    """``picks`` as the message made them, then the tools a prior alone proposes (no score: the
    message did not pick them), priced by that chance. ``known`` holds the priors of the tools
    the request misses (``AllowedCatalog.priors_for``): a pick among them is a weak one, so it takes
    the prior where that is larger (a miss is what the prior counts)."""
    have = {c.name for c in picks}
    return [
        *(raised_to(c, known[c.name].chance) if c.name in known else c for c in picks),
        *(Candidate(n, p.source, None, p.chance) for n, p in known.items() if n not in have),
    ]


def unopened(
    answer: Sequence[Candidate], known: Mapping[str, Prior], exclude: Collection[str], room: int
) -> list[Candidate]:
    """A ``load_tools`` answer with the priors an opening would have offered, in a session no
    opening selected for (no user text reached it: an MCP client's searches): at least
    :data:`USAGE_MIN_CHANCE`, none of ``answer`` or ``exclude``, best first, ``room`` at most,
    before its mentions. Such a session's searches are its only selection, and a generic tool
    (a code runner, a file read) is searched for with the task's words, which never name it."""
    have = {c.name for c in answer}
    fresh = [
        Candidate(n, p.source, None, p.chance)
        for n, p in known.items()
        if p.chance >= USAGE_MIN_CHANCE and n not in have and n not in exclude
    ][:room]
    mentions = [c for c in answer if c.mention]
    return [*(c for c in answer if not c.mention), *fresh, *mentions]


def with_mates(
    picks: Sequence[Candidate],
    within: Mapping[str, tuple[str, float]],
    size: int,
    bundle_of: BundleOf,
    record: Mapping[str, float] | None = None,
) -> list[Candidate]:
    """``picks`` and their servers' habitual mates: a session needs a pick's server at least as
    often as the pick (its chance as the opening prices it, on a catalog of ``size`` tools), or
    as the server's ``record`` says (:meth:`Usage.servers_found`: how often a request that found
    the server's tools used the server; for a pick the message made, not one a prior alone
    proposes), and a tool of that server as often as that times its share beside another of
    the server's tools (:meth:`Usage.within`), as far as :func:`one_escape` leaves it. Any pick
    vouches for its server (``bundle_of``), habitual or not. Raises a pick to that chance, or
    adds the mate with it (no score: the message did not pick it); the price decides. A
    server's tools go together far more than a catalog's do (a paper search's search, download
    and read; a map's geocoder and its place search)."""
    scored = [c.score for c in picks if c.score is not None]
    top = max(scored) if scored else 0.0
    known = record or {}
    server: dict[str, float] = {}
    for c in picks:
        if (home := bundle_of.get(c.name)) is not None:
            found = known.get(home, 0.0) if c.score is not None else 0.0
            chance = max(needed(c.score or 0.0, top, size), c.chance or 0.0, found)
            server[home] = max(server.get(home, 0.0), chance)
    claim = one_escape(within)
    mates = {t: server[s] * claim[t] for t, (s, _) in within.items() if s in server}
    have = {c.name for c in picks}
    out = [raised_to(c, mates[c.name]) if c.name in mates else c for c in picks]
    extra = sorted(
        ((n, c) for n, c in mates.items() if n not in have), key=lambda kv: (-kv[1], kv[0])
    )
    return out + [Candidate(n, "usage", None, c) for n, c in extra]


def one_escape(within: Mapping[str, tuple[str, float]]) -> dict[str, float]:
    """Tool -> the part of its share beside (:meth:`Usage.within`) that it may claim: the
    likeliest mates of a server first, until their shares reach 1, the rest what is left.

    The opening prices each pick alone, as if holding it saved an escape with its chance; but
    one escape (the server's bundle, or a search naming it) brings whichever mates of a server
    the session turns out to need, so together they save at most one, and only when the server
    is needed: their chances sum to at most the server's. A server whose mates' shares sum
    under 1 (a filesystem's ``write_file`` beside ``read_file``) keeps them whole; one with many
    (a domain server's getters, each used beside in the same few sessions) its likeliest few."""
    spent: dict[str, float] = {}
    out: dict[str, float] = {}
    for tool, (server, share) in sorted(within.items(), key=lambda kv: (-kv[1][1], kv[0])):
        out[tool] = min(share, max(0.0, 1.0 - spent.get(server, 0.0)))
        spent[server] = spent.get(server, 0.0) + share
    return out


def raised_to(pick: Candidate, chance: float) -> Candidate:
    """``pick`` with the larger of its own ``chance`` and the one given (score and source
    kept)."""
    return replace(pick, chance=max(pick.chance or 0.0, chance))


# ----- the ``implicit`` setting ----------------------------------------------------------------


def members(entry: str, bundle_of: BundleOf) -> list[str]:
    """The tools ``entry`` names: a tool, ``bundle:NAME`` or a bare bundle name, ``server/tool``
    (the tool as its server lists it) or a shell-style pattern; none when it names nothing."""
    if entry in bundle_of:
        return [entry]
    bundle = entry.removeprefix("bundle:")
    inside = [n for n, b in bundle_of.items() if b == bundle]
    if inside or entry.startswith("bundle:"):
        return inside
    if "/" in entry:
        server, tool = entry.split("/", 1)
        spelled = {tool, f"{server}_{tool}", f"{server}__{tool}", f"mcp__{server}__{tool}"}
        return [n for n, b in bundle_of.items() if b == server and n in spelled]
    if set("*?[") & set(entry):
        return [n for n in bundle_of if fnmatchcase(n, entry)]
    return []


def declared(entries: Iterable[str], bundle_of: BundleOf) -> dict[str, float]:
    """Tool -> declared chance: :data:`IMPLICIT_CHANCE` for a tool named, shared evenly among
    the tools of a bundle or pattern (which of them a session needs is not declared)."""
    out: dict[str, float] = {}
    for entry in entries:
        names = members(entry, bundle_of)
        for name in names:
            out[name] = max(out.get(name, 0.0), IMPLICIT_CHANCE / len(names))
    return out


def check_implicit(entries: Iterable[str], specs: Iterable[ToolSpec]) -> None:
    """Refuse an ``implicit`` entry that names none of the allowed ``specs``, with the closest
    names (a typo would otherwise declare nothing).

    Raises:
        ConfigError: one line naming the entry and the closest tools or bundles.
    """
    bundle_of = {spec.name: spec.bundle for spec in specs}
    for entry in entries:
        if members(entry, bundle_of):
            continue
        pool = sorted({*bundle_of, *(b for b in bundle_of.values() if b)})
        close = difflib.get_close_matches(entry.removeprefix("bundle:"), pool, n=3, cutoff=0.5)
        hint = f"closest: {', '.join(close)}" if close else "no tool or bundle has a similar name"
        raise ConfigError(
            f"implicit entry {entry!r} names no allowed tool ({hint}); write a tool's name, "
            "a bundle (bundle:NAME), server/tool or a pattern, or remove the entry."
        )
