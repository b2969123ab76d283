"""The allow-list and deny-list that decide which registered tools an agent may ever see or run.

Entries are exact tool names, shell-style patterns (``mcp__github__*``) or ``bundle:NAME`` for
every member of a bundle. Deny wins over allow; ``allow=None`` means "everything not denied".
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

from tooltray.tools.errors import ConfigError
from tooltray.tools.spec import ToolSpec

_WILDCARDS = frozenset("*?[")


class NameSet:
    """A compiled set of allow/deny entries.

    Args:
        entries: names, patterns or ``bundle:NAME`` entries.
        what: ``allow`` or ``deny``, for error messages.
    """

    def __init__(self, entries: Iterable[str], what: str) -> None:
        if isinstance(entries, str):
            raise ConfigError(f"{what} must be a set of names, not the string {entries!r}.")
        self.entries = frozenset(entries)
        for entry in self.entries:
            if not isinstance(entry, str) or not entry.strip():
                raise ConfigError(f"{what} entry {entry!r} must be a non-empty tool name.")
        self.names = {e for e in self.entries if not _WILDCARDS & set(e)}
        self.bundles = {e[7:] for e in self.names if e.startswith("bundle:")}
        self.patterns = tuple(sorted(e for e in self.entries if _WILDCARDS & set(e)))

    def matches(self, spec: ToolSpec) -> bool:
        """True if ``spec`` is named, matched by a pattern, or in a listed bundle."""
        if spec.name in self.names or (spec.bundle is not None and spec.bundle in self.bundles):
            return True
        return any(fnmatchcase(spec.name, p) for p in self.patterns)


class Policy:
    """Allow and deny together: the filter every downstream view of the registry goes through."""

    def __init__(self, allow: Iterable[str] | None = None, deny: Iterable[str] | None = None):
        self.allow = None if allow is None else NameSet(allow, "allow")
        self.deny = NameSet(deny or (), "deny")

    def permits(self, spec: ToolSpec) -> bool:
        """True if ``spec`` passes the deny-list and the allow-list."""
        if self.deny.matches(spec):
            return False
        return self.allow is None or self.allow.matches(spec)

    def refusal(self, spec: ToolSpec, asked: str) -> str:
        """The message for a tool that exists but is filtered out."""
        shown = spec.name if asked == spec.name else f"{spec.name} (asked as {asked!r})"
        if self.deny.matches(spec):
            why, fix = "it matches the deny-list", "remove the matching entry from deny"
        else:
            why, fix = "it is not in the allow-list", f"add {spec.name!r} to allow"
        return (
            f"Tool {shown!r} exists but is not allowed here: {why}. To use it, {fix} "
            "(ToolRegistry(allow=..., deny=...) or registry.allow / registry.deny)."
        )
