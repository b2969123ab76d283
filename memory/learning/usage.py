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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.embedders.base import dot_rows
from tooltray.memory.retrieval.scoring import Candidate
from tooltray.memory.tuning import (
    IMPLICIT_CHANCE,
    USAGE_MIN_CHANCE,
    USAGE_MIN_SESSIONS,
    USAGE_MIN_USES,
    USAGE_PSEUDO,
)
from tooltray.tools.errors import ConfigError
from tooltray.tools.spec import ToolSpec

BundleOf = Mapping[str, "str | None"]
"""A tool name -> its bundle (the MCP server it comes from), ``None`` for a tool without one."""


@dataclass(frozen=True)
class Usage:
    """Past sessions' tool use: per session, its decay weight and the tools it used."""

    weights: tuple[float, ...] = ()
    tools: tuple[frozenset[str], ...] = ()

    @property
    def sessions(self) -> int:
        """How many past sessions the shares are over."""
        return len(self.weights)

    @cached_property
    def uses(self) -> dict[str, float]:
        """Tool -> decayed count of the sessions that used it (before any shrinkage)."""
        out: dict[str, float] = {}
        for weight, tools in zip(self.weights, self.tools, strict=True):
            for tool in tools:
                out[tool] = out.get(tool, 0.0) + weight
        return out

    @cached_property
    def shares(self) -> dict[str, float]:
        """Tool -> weighted share of the sessions that used it, shrunk by :data:`USAGE_PSEUDO`
        (empty under :data:`USAGE_MIN_SESSIONS` sessions)."""
        return self._shares(lambda tools: tools)

    def server_shares(self, bundle_of: BundleOf) -> dict[str, float]:
        """Server (bundle) -> weighted share of the sessions that used any of its tools."""
        return self._shares(lambda tools: {b for t in tools if (b := bundle_of.get(t))})

    def _shares(self, keys: Callable[[frozenset[str]], Iterable[str]]) -> dict[str, float]:
        if self.sessions < USAGE_MIN_SESSIONS:
            return {}
        total = sum(self.weights) + USAGE_PSEUDO
        out: dict[str, float] = {}
        for weight, tools in zip(self.weights, self.tools, strict=True):
            for key in keys(tools):
                out[key] = out.get(key, 0.0) + weight
        return {key: used / total for key, used in out.items()}


def usage_of(
    sessions: Sequence[tuple[int, frozenset[str]]], newest: int, half_life: float
) -> Usage:
    """:class:`Usage` of ``(newest learned id, tools used)`` per past session; a session counts
    half after ``half_life`` learned turns since its last one, like the other learned signals."""
    weights = tuple(2.0 ** (-(newest - last) / half_life) for last, _ in sessions)
    return Usage(weights, tuple(tools for _, tools in sessions))


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
        n = len(self.vectors)
        if requests.ndim != 2 or requests.shape[1] != self.vectors.shape[1] or self.top < 1:
            return [frozenset(used) for used in tools]
        if self.top >= n:
            return [frozenset(t for t in used if t not in self.position) for used in tools]
        sims = dot_rows(self.vectors, requests)
        cut = np.partition(sims, n - self.top, axis=1)[:, n - self.top].tolist()
        return [
            frozenset(t for t in used if (i := self.position.get(t)) is None or row[i] < bar)
            for row, bar, used in zip(sims.tolist(), cut, tools, strict=True)
        ]


@dataclass(frozen=True)
class Prior:
    """A tool's chance of being needed by any session, and where it comes from."""

    chance: float
    source: Literal["usage", "implicit"]
    sessions: int = 0
    server: str | None = None
    server_share: float | None = None

    def why(self) -> str:
        """The reason ``tooltray explain`` gives for a tool the prior loaded."""
        if self.source == "implicit":
            return f"declared implicit, chance {self.chance:.2f}"
        text = f"usage prior {self.chance:.2f} over {self.sessions} sessions"
        if self.server is not None and self.server_share is not None:
            text += f"; server {self.server} {self.server_share:.2f}"
        return text


def priors(
    usage: Usage, declared: Mapping[str, float], bundle_of: BundleOf, *, priced: bool = False
) -> dict[str, Prior]:
    """Every tool whose learned share or declared chance reaches :data:`USAGE_MIN_CHANCE`, with
    the larger of the two, best first; for an opening that prices its picks (``priced``), also
    a share under it that :data:`USAGE_MIN_USES` sessions back (the price decides)."""
    learned, servers = usage.shares, usage.server_shares(bundle_of) if usage.shares else {}
    habit = {n for n, k in usage.uses.items() if k >= USAGE_MIN_USES} if priced and learned else ()
    out: dict[str, Prior] = {}
    for name in {*learned, *declared}:
        share, given = learned.get(name, 0.0), declared.get(name, 0.0)
        low = max(share, given) < USAGE_MIN_CHANCE and name not in habit
        if low or name not in bundle_of:
            continue
        if given > share:
            out[name] = Prior(given, "implicit")
            continue
        server = bundle_of.get(name)
        shared = servers.get(server) if server is not None else None
        out[name] = Prior(share, "usage", usage.sessions, server, shared)
    return dict(sorted(out.items(), key=lambda kv: (-kv[1].chance, kv[0])))


def usual(picks: Sequence[Candidate], known: Mapping[str, Prior]) -> list[Candidate]:
    """``picks`` as the message made them, then the tools a prior alone proposes (no score: the
    message did not pick them), priced by that chance. ``known`` holds the priors of the tools
    the request misses (``AllowedCatalog.priors_for``): a pick among them is a weak one, so it takes
    the prior where that is larger (a miss is what the prior counts)."""
    have = {c.name for c in picks}
    return [
        *(raised(c, known[c.name]) if c.name in known else c for c in picks),
        *(Candidate(n, p.source, None, p.chance) for n, p in known.items() if n not in have),
    ]


def raised(pick: Candidate, prior: Prior) -> Candidate:
    """``pick`` with the larger of its own chance and ``prior``'s (score and source kept)."""
    return replace(pick, chance=max(pick.chance or 0.0, prior.chance))


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
