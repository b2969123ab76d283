"""tooltray.memory: the working memory: trinket, selection, prompt, store, skills, agent loop.

The exports load on first use (a module-level ``__getattr__``), so ``import tooltray.memory`` and
the CLI's fast commands do not pay for the agent loop, the embedders and onnxruntime.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tooltray.memory.agent.loop import Agent, TurnResult
    from tooltray.memory.agent.textcalls import parse_tool_calls
    from tooltray.memory.config import Settings
    from tooltray.memory.core.planner import Planner
    from tooltray.memory.core.prompt import PromptView
    from tooltray.memory.core.results import ResultShelf
    from tooltray.memory.core.skills import Skill, SkillLibrary, load_skills
    from tooltray.memory.core.trinket import ToolLoaderTrinket
    from tooltray.memory.embedders import (
        CachedEmbedder,
        Embedder,
        MiniLMOnnxEmbedder,
        OpenAIEmbedder,
        default_embedder,
    )
    from tooltray.memory.metatools.specs import META_TOOL_NAMES, meta_tool_specs
    from tooltray.memory.retrieval import Hit, ToolIndex, build_query
    from tooltray.memory.store import Store
    from tooltray.tools.errors import ModelError
    from tooltray.tools.sources.mcp import MCPSource

_HOMES: dict[str, str] = {
    "Agent": "tooltray.memory.agent.loop",
    "ModelError": "tooltray.tools.errors",
    "TurnResult": "tooltray.memory.agent.loop",
    "parse_tool_calls": "tooltray.memory.agent.textcalls",
    "Settings": "tooltray.memory.config",
    "Planner": "tooltray.memory.core.planner",
    "PromptView": "tooltray.memory.core.prompt",
    "ResultShelf": "tooltray.memory.core.results",
    "Skill": "tooltray.memory.core.skills",
    "SkillLibrary": "tooltray.memory.core.skills",
    "load_skills": "tooltray.memory.core.skills",
    "ToolLoaderTrinket": "tooltray.memory.core.trinket",
    "CachedEmbedder": "tooltray.memory.embedders",
    "Embedder": "tooltray.memory.embedders",
    "MiniLMOnnxEmbedder": "tooltray.memory.embedders",
    "OpenAIEmbedder": "tooltray.memory.embedders",
    "default_embedder": "tooltray.memory.embedders",
    "META_TOOL_NAMES": "tooltray.memory.metatools.specs",
    "meta_tool_specs": "tooltray.memory.metatools.specs",
    "Hit": "tooltray.memory.retrieval",
    "ToolIndex": "tooltray.memory.retrieval",
    "build_query": "tooltray.memory.retrieval",
    "Store": "tooltray.memory.store",
    "MCPSource": "tooltray.tools.sources.mcp",
}

__all__ = [
    "META_TOOL_NAMES",
    "Agent",
    "CachedEmbedder",
    "Embedder",
    "Hit",
    "MCPSource",
    "MiniLMOnnxEmbedder",
    "ModelError",
    "OpenAIEmbedder",
    "Planner",
    "PromptView",
    "ResultShelf",
    "Settings",
    "Skill",
    "SkillLibrary",
    "Store",
    "ToolIndex",
    "ToolLoaderTrinket",
    "TurnResult",
    "build_query",
    "default_embedder",
    "load_skills",
    "meta_tool_specs",
    "parse_tool_calls",
]


def __getattr__(name: str) -> Any:
    """Import an export's home module on first use and cache the export here."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
