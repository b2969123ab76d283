"""Allow and deny lists by every name a user knows a gateway tool by.

A user writes the name the upstream server lists (``wipe_disk``), the name the gateway shows
(``alpha_wipe_disk``), or ``server/tool`` (``alpha/wipe_disk``), besides the registry's own
patterns and ``bundle:SERVER``. The registry only knows the shown names, so each entry is
turned into those here, every time the catalog changes: an upstream name then matches the tool
on every server that lists it, and the registry's filter holds on every route (``tools/list``,
``load_tools``, the bridge, a direct call).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Protocol

from tooltray.memory.gateway.config import GatewayConfigError

_WILDCARDS = frozenset("*?[")


class Routed(Protocol):
    """What the policy reads of a route: the server and the tool's name there."""

    @property
    def server(self) -> str:
        """The upstream server's name."""

    @property
    def tool(self) -> str:
        """The tool's name on that server."""


def aliases(shown: str, route: Routed) -> tuple[str, ...]:
    """Every name a user may write for the tool shown as ``shown``."""
    return (shown, route.tool, f"{route.server}/{route.tool}")


def _matches(entry: str, names: Iterable[str], server: str) -> bool:
    if entry.startswith("bundle:"):
        return entry[7:] == server
    if _WILDCARDS & set(entry):
        return any(fnmatchcase(n, entry) for n in names)
    return entry in names


@dataclass(frozen=True)
class GatewayPolicy:
    """The settings' allow/deny entries, resolved against the gateway's routes.

    Args:
        allow: entries permitted (``None``: every tool not denied).
        deny: entries refused; deny wins.
    """

    allow: tuple[str, ...] | None
    deny: tuple[str, ...]

    def shown_names(self, entries: Iterable[str], routes: Mapping[str, Routed]) -> set[str]:
        """The shown names of every route some entry names."""
        wanted = tuple(entries)
        return {
            shown
            for shown, route in routes.items()
            if any(_matches(e, aliases(shown, route), route.server) for e in wanted)
        }

    def registry_lists(self, routes: Mapping[str, Routed]) -> tuple[set[str] | None, set[str]]:
        """(allow, deny) as shown names, for the registry's policy."""
        allow = None if self.allow is None else self.shown_names(self.allow, routes)
        return allow, self.shown_names(self.deny, routes)

    def unmatched(self, routes: Mapping[str, Routed]) -> list[str]:
        """Entries that name no tool of ``routes`` (a typo would otherwise deny nothing)."""
        return [e for e in (*(self.allow or ()), *self.deny) if not self.shown_names((e,), routes)]

    def check(self, routes: Mapping[str, Routed]) -> None:
        """Refuse an entry that names nothing, with the closest names.

        Raises:
            GatewayConfigError: one line naming the entry and the closest tools.
        """
        missing = self.unmatched(routes)
        if not missing:
            return
        pool = sorted({a for s, r in routes.items() for a in aliases(s, r)})
        entry = missing[0]
        which = "deny" if entry in self.deny else "allow"
        close = difflib.get_close_matches(entry.removeprefix("bundle:"), pool, n=3, cutoff=0.5)
        hint = f"closest tools: {', '.join(close)}" if close else "no tool has a similar name"
        raise GatewayConfigError(
            f"{which} entry {entry!r} matches no tool of the gateway's servers ({hint}); name "
            "a tool as its server lists it, as the gateway shows it, or as server/tool."
        )
