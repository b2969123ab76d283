"""The working memory's core: the trinket, its lifecycle rules, planning, prompt, skills.

The exports load on first use, so a module of the core's servants (the meta-tools, say) can
import one core module without loading the trinket, which imports them in turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooltray.tools.lazy import lazy_exports

if TYPE_CHECKING:
    from tooltray.memory.core.catalog import AllowedCatalog, Planner
    from tooltray.memory.core.prompt import PromptView, compose
    from tooltray.memory.core.results import ResultShelf
    from tooltray.memory.core.session import SessionState
    from tooltray.memory.core.trinket import ToolLoaderTrinket
    from tooltray.memory.retrieval.skills import Skill, SkillLibrary, load_skills

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        ".catalog": ("AllowedCatalog", "Planner"),
        ".prompt": ("PromptView", "compose"),
        ".results": ("ResultShelf",),
        ".session": ("SessionState",),
        "tooltray.memory.retrieval.skills": ("Skill", "SkillLibrary", "load_skills"),
        ".trinket": ("ToolLoaderTrinket",),
    },
)


__all__ = [
    "AllowedCatalog",
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
