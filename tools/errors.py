"""The one root exception of tooltray and its named kinds.

Every error tooltray raises derives from :class:`TooltrayError`, so an agent can catch one class
around a loader call and degrade to "all tools". Each message says what happened and what to do.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterable

SHOWN_CHARS = 80
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, SHOWN_CHARS, SHOWN_CHARS


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` cut to about ``limit`` characters, saying how long a cut string was.

    Messages quote what the caller sent so they can find it, but a name or key can be any size
    (or nested any depth): a 100,000-character name must not come back whole to the model or
    the logs.
    """
    text = repr(value[: limit + 1]) if isinstance(value, str) else _REPR.repr(value)
    if len(text) <= limit and not (isinstance(value, str) and len(value) > limit):
        return text
    size = f" ({len(value)} characters)" if isinstance(value, str) else ""
    return f"{text[: max(limit - 1, 1)]}…{size}"


def shown_path(path: object, limit: int = SHOWN_CHARS) -> str:
    """A file path quoted for a message, cut in its middle when long: the file's own name is
    what the reader looks for, and a deep temporary folder must not push it out."""
    text = repr(str(path))
    if len(text) <= limit:
        return text
    head = max((limit - 1) // 3, 1)
    return f"{text[:head]}…{text[-(limit - 1 - head) :]}"


def shown_keys(keys: Iterable[object], most: int = 5) -> str:
    """Up to ``most`` keys, each :func:`shown`, in a stable order, with a count of the rest."""
    items = sorted({shown(k, 40) for k in keys})
    rest = f" and {len(items) - most} more" if len(items) > most else ""
    return f"[{', '.join(items[:most])}]{rest}"


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
        super().__init__(f"Unknown tool {shown(name)}.{hint} Register it or check the spelling.")

    def __str__(self) -> str:
        return str(self.args[0])


class ToolNotAllowedError(TooltrayError, PermissionError):
    """A tool exists but is outside the allow-list; it is never rendered, loaded or run."""


class StoreError(TooltrayError):
    """The database could not be read or written (locked, corrupt, unreachable)."""


class StoreDataError(StoreError):
    """A change holds a value the database can never take (encoding, type, constraint): no retry
    helps, so the writer drops that change and goes on with the rest (an outage keeps them)."""


class InputError(TooltrayError, ValueError):
    """A caller passed the public API a session id, messages or a name it cannot use."""


class SchemaVersionError(StoreError):
    """The database schema is older or newer than this tooltray; run `tooltray db upgrade`."""


class EmbedderError(TooltrayError):
    """The embedder could not produce vectors (model missing, server down)."""


class MetaToolArgumentError(TooltrayError, ValueError):
    """A meta-tool call had arguments tooltray could not use."""


class ConfigError(TooltrayError, ValueError):
    """A setting has a value tooltray cannot use."""


class ModelError(TooltrayError):
    """The model server failed to answer a request."""


class MCPSourceError(TooltrayError):
    """An MCP server could not be started, listed or called."""


class MCPToolError(TooltrayError):
    """An MCP tool ran and reported an error (``isError``); the text is the server's."""


class SessionAccessError(TooltrayError, PermissionError):
    """A gateway client named a session it may not open (another client's, or a bad name)."""


class SessionForkError(TooltrayError, ValueError):
    """A session cannot be started from another: the parent is missing or the child exists."""
