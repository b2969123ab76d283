"""tooltray.memory: the working memory: trinket, selection, prompt, store, skills, agent loop."""

from tooltray.memory.agent import Agent, ModelError, TurnResult
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
from tooltray.tools.sources.mcp import MCPSource

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
