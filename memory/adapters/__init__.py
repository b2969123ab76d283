"""tooltray.memory.adapters: thin bridges from agent frameworks to the trinket (one extra each).

Each adapter is a client of the trinket's public API and imports its framework only when used,
so ``import tooltray.memory.adapters`` works without any extra installed:

- :class:`AgentsTray` (``tooltray[openai-agents]``): the OpenAI Agents SDK.
- :class:`TrayToolset` (``tooltray[pydantic-ai]``): a pydantic-ai wrapper toolset.
- :class:`NativeDeferral` (no extra): a session rendered for provider-native tool deferral
  (Anthropic ``defer_loading``, OpenAI Responses ``tool_search``), searched by tooltray.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_HOMES = {
    "AgentsTray": "openai_agents",
    "NativeDeferral": "native_search",
    "TrayHooks": "openai_agents",
    "TrayModel": "openai_agents",
    "TrayToolset": "pydantic_ai_toolset",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    """Import an adapter's module on first use (its framework is an optional extra)."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
