"""tooltray.memory: the working memory: trinket, selection, prompt, store, skills, agent loop.

The exports load on first use (a module-level ``__getattr__``), so ``import tooltray.memory`` and
the CLI's fast commands do not pay for the agent loop, the embedders and onnxruntime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooltray.tools.lazy import lazy_exports

if TYPE_CHECKING:
    from tooltray.memory.agent.loop import Agent, TurnResult
    from tooltray.memory.agent.textcalls import parse_tool_calls
    from tooltray.memory.config import Settings
    from tooltray.memory.core.catalog import AllowedCatalog, Planner
    from tooltray.memory.core.prompt import PromptView
    from tooltray.memory.core.results import ResultShelf
    from tooltray.memory.core.trinket import ToolLoaderTrinket
    from tooltray.memory.embedders import (
        CachedEmbedder,
        Embedder,
        MiniLMOnnxEmbedder,
        OpenAIEmbedder,
        default_embedder,
    )
    from tooltray.memory.metatools.meta_tools import META_TOOL_NAMES, meta_tool_specs
    from tooltray.memory.retrieval import Hit, ToolIndex, build_query
    from tooltray.memory.retrieval.skills import Skill, SkillLibrary, load_skills
    from tooltray.memory.store import Store
    from tooltray.tools.errors import ModelError
    from tooltray.tools.sources.mcp import MCPSource

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "tooltray.memory.agent.loop": ("Agent", "TurnResult"),
        "tooltray.memory.agent.textcalls": ("parse_tool_calls",),
        "tooltray.memory.config": ("Settings",),
        "tooltray.memory.core.catalog": ("AllowedCatalog", "Planner"),
        "tooltray.memory.core.prompt": ("PromptView",),
        "tooltray.memory.core.results": ("ResultShelf",),
        "tooltray.memory.retrieval.skills": ("Skill", "SkillLibrary", "load_skills"),
        "tooltray.memory.core.trinket": ("ToolLoaderTrinket",),
        "tooltray.memory.embedders": (
            "CachedEmbedder",
            "Embedder",
            "MiniLMOnnxEmbedder",
            "OpenAIEmbedder",
            "default_embedder",
        ),
        "tooltray.memory.metatools.meta_tools": ("META_TOOL_NAMES", "meta_tool_specs"),
        "tooltray.memory.retrieval": ("Hit", "ToolIndex", "build_query"),
        "tooltray.memory.store": ("Store",),
        "tooltray.tools.errors": ("ModelError",),
        "tooltray.tools.sources.mcp": ("MCPSource",),
    },
)

__all__ = [
    "META_TOOL_NAMES",
    "Agent",
    "AllowedCatalog",
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
