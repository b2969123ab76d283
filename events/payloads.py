"""Payload models carried by tooltray's signals: one pydantic model per signal.

Receivers get ``(sender, payload=Model)`` where the sender is the session id, so many sessions can
share one process and one namespace without crossing.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Usage(_Payload):
    """What the provider reported for a turn's model calls, summed over them.

    OpenAI Chat Completions: ``cached_input_tokens`` = ``prompt_tokens_details.cached_tokens``,
    ``uncached_input_tokens`` = ``prompt_tokens`` minus those, ``output_tokens`` =
    ``completion_tokens``. Anthropic: ``cache_read_input_tokens``, ``input_tokens`` +
    ``cache_creation_input_tokens``, ``output_tokens``. A session's cost is then a SQL sum over
    the ``turns`` table.
    """

    cached_input_tokens: int = Field(default=0, ge=0)
    uncached_input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)


class TurnCompleted(_Payload):
    """Emitted by the agent when a user turn is finished (the model answered).

    A turn is a user turn: the number of user messages so far, which ``prepare`` reads from the
    conversation. ``turn`` may say it (0, the default: the turn ``prepare`` last saw);
    ``message_count`` is for the record only and never counts as turns, since a turn with tool
    calls holds more than two messages.
    ``usage`` (optional) is the provider's reported token usage for the turn, stored with it.
    """

    turn: int = Field(default=0, ge=0)
    message_count: int | None = Field(default=None, ge=0)
    usage: Usage | None = None


class ToolUsed(_Payload):
    """Emitted by the agent after it ran a tool (meta-tools excluded)."""

    tool: str
    turn: int | None = Field(default=None, ge=0)
    ok: bool = True


class SessionStarted(_Payload):
    """A session boundary: a new session, or an explicit resume of a stored one."""

    turn: int
    resumed: bool
    loaded: list[str]


class SessionEnded(_Payload):
    """The agent closed the session; its state stays in the store."""

    turn: int


class ContextCompacted(_Payload):
    """The agent compacted its context: a safe moment to evict idle tools."""

    turn: int | None = None
    evicted: list[str] = Field(default_factory=list)


class ToolsLoaded(_Payload):
    """Tools were appended to the loaded set."""

    turn: int
    tools: list[str]
    source: str


class ToolsUnloaded(_Payload):
    """Tools left the loaded set: ``reason`` is unloaded, evicted or fallback-expired."""

    turn: int
    tools: list[str]
    reason: str


class SelectionChanged(_Payload):
    """The tools the model sees changed, and with them the prompt-prefix hash."""

    turn: int
    added: list[str]
    removed: list[str]
    prefix_hash: str


class EscapeHatch(_Payload):
    """The model reached past the selection: load_tools, fallback, or an unlisted call."""

    turn: int
    kind: Literal["load_tools", "fallback", "unlisted_call"]
    tools: list[str]


class LoaderDegraded(_Payload):
    """The loader could not do its job and exposed every allowed tool (or the last known set)."""

    turn: int
    reason: str
    error: str


class ToolsRegistered(_Payload):
    """Tools joined a registry while the agent runs (the instance layer, an MCP server).

    The sender is the :class:`~tooltray.tools.registry.ToolRegistry` itself, not a session:
    registration belongs to the registry, which many sessions may share.
    """

    tools: list[str]
    layer: str = "instance"
