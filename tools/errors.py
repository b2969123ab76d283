"""The one root exception of tooltray and its named kinds.

Every error tooltray raises derives from :class:`TooltrayError`, so an agent can catch one class
around a loader call and degrade to "all tools". Each message says what happened and what to do.
"""

from __future__ import annotations


class TooltrayError(Exception):
    """Root of every tooltray error; its message names the problem and the fix."""


class ToolSpecError(TooltrayError, ValueError):
    """A tool definition is malformed: bad name, bad schema, missing field."""


class DuplicateToolError(TooltrayError, ValueError):
    """Two tools claim the same name (or the same name once MCP prefixes are stripped)."""


class UnknownToolError(TooltrayError, KeyError):
    """A tool name that no registry layer knows; carries did-you-mean candidates."""

    def __init__(self, name: str, candidates: list[str] | None = None) -> None:
        self.name = name
        self.candidates = list(candidates or [])
        hint = f" Did you mean: {', '.join(self.candidates)}?" if self.candidates else ""
        super().__init__(f"Unknown tool {name!r}.{hint} Register it or check the spelling.")

    def __str__(self) -> str:
        return str(self.args[0])


class ToolNotAllowedError(TooltrayError, PermissionError):
    """A tool exists but is outside the allow-list; it is never rendered, loaded or run."""


class StoreError(TooltrayError):
    """The database could not be read or written (locked, corrupt, unreachable)."""


class SchemaVersionError(StoreError):
    """The database schema is older or newer than this tooltray; run `tooltray db upgrade`."""


class EmbedderError(TooltrayError):
    """The embedder could not produce vectors (model missing, server down)."""


class MetaToolArgumentError(TooltrayError, ValueError):
    """A meta-tool call had arguments tooltray could not use."""


class ConfigError(TooltrayError, ValueError):
    """A setting has a value tooltray cannot use."""
