"""tooltray.memory.adapters: thin bridges from agent frameworks to the trinket (one extra each).

Each adapter is a client of the trinket's public API and imports its framework only when used,
so ``import tooltray.memory.adapters`` works without any extra installed:

- :class:`AgentsTray` (``tooltray[openai-agents]``): the OpenAI Agents SDK.
- :class:`TrayToolset` (``tooltray[pydantic-ai]``): a pydantic-ai wrapper toolset.
- :class:`TrayMiddleware` (``tooltray[langchain]``): a LangChain / LangGraph agent middleware.
- :class:`AdkTray` (``tooltray[adk]``): a Google ADK toolset.
- :class:`CodeMode` (no extra): the session's tools as a typed Python API for a code tool.
- :class:`NativeDeferral` (no extra): a session rendered for provider-native tool deferral
  (Anthropic ``defer_loading``, OpenAI Responses ``tool_search``), searched by tooltray.
- :func:`load_answer`, :func:`send_revealing`, :func:`degrade` (no extra): a provider request
  answered or sent again through the trinket.
"""

from __future__ import annotations

from tooltray.tools.lazy import lazy_exports

_HOMES = {
    ".code_mode": ("CodeMode",),
    ".google_adk": ("AdkTray",),
    ".langchain_middleware": ("TrayMiddleware",),
    ".native_search": ("NativeDeferral",),
    ".openai_agents": ("AgentsTray", "TrayHooks", "TrayModel"),
    ".pydantic_ai_toolset": ("TrayReveals", "TrayToolset"),
    ".requests": ("degrade", "load_answer", "send_revealing"),
}
__all__ = sorted(name for names in _HOMES.values() for name in names)
# An adapter's module loads on first use: its framework is an optional extra.
__getattr__, __dir__ = lazy_exports(globals(), _HOMES)
