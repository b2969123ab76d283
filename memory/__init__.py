"""tooltray.memory: the working memory: trinket, selection, prompt, store, skills, agent loop."""

from tooltray.memory.agent import Agent, ModelError, TurnResult
from tooltray.memory.config import Settings
from tooltray.memory.embedders import (
    CachedEmbedder,
    Embedder,
    MiniLMOnnxEmbedder,
    OpenAIEmbedder,
    default_embedder,
)
from tooltray.memory.mcp_source import MCPSource
from tooltray.memory.metatools import META_TOOL_NAMES, meta_tool_specs
from tooltray.memory.planner import Planner
from tooltray.memory.prompt import PromptView
from tooltray.memory.results import ResultShelf
from tooltray.memory.retrieval import Hit, ToolIndex, build_query
from tooltray.memory.skills import Skill, SkillLibrary, load_skills
from tooltray.memory.store import Store
from tooltray.memory.textcalls import parse_tool_calls
from tooltray.memory.trinket import ToolLoaderTrinket

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
