"""The working memory's core: the trinket, its lifecycle rules, planning, prompt, skills.

The exports load on first use, so a module of the core's servants (the meta-tools, say) can
import one core module without loading the trinket, which imports them in turn.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tooltray.memory.core.planner import Planner
    from tooltray.memory.core.prompt import PromptView, compose
    from tooltray.memory.core.results import ResultShelf
    from tooltray.memory.core.session import SessionState
    from tooltray.memory.core.skills import Skill, SkillLibrary, load_skills
    from tooltray.memory.core.trinket import ToolLoaderTrinket

_HOMES: dict[str, str] = {
    "Planner": "planner",
    "PromptView": "prompt",
    "compose": "prompt",
    "ResultShelf": "results",
    "SessionState": "session",
    "Skill": "skills",
    "SkillLibrary": "skills",
    "load_skills": "skills",
    "ToolLoaderTrinket": "trinket",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)


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
