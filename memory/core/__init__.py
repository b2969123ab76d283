"""The working memory's core: the trinket, its lifecycle rules, planning, prompt, skills."""

from tooltray.memory.core.planner import Planner
from tooltray.memory.core.prompt import PromptView, compose
from tooltray.memory.core.results import ResultShelf
from tooltray.memory.core.session import SessionState
from tooltray.memory.core.skills import Skill, SkillLibrary, load_skills
from tooltray.memory.core.trinket import ToolLoaderTrinket

__all__ = [
    "Planner",
    "PromptView",
    "ResultShelf",
    "SessionState",
    "Skill",
    "SkillLibrary",
    "ToolLoaderTrinket",
    "compose",
    "load_skills",
]
