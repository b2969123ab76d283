"""The two prompt views a session can get: its selection, or every allowed tool.

One home for both, so the trinket (a small catalog, a degraded or disabled loader) and its
clients (an agent whose ``prepare`` failed) render "all tools" the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from tooltray.memory.config import Settings
from tooltray.memory.core.planner import Planner
from tooltray.memory.core.prompt import NATIVE_PATHS, PromptView, compose
from tooltray.memory.core.session import SessionState, ViewMode
from tooltray.memory.metatools import meta_tool_specs
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec


def all_tools_view(
    session_id: str,
    turn: int,
    mode: ViewMode,
    settings: Settings,
    allowed: Sequence[ToolSpec],
    eager_tokens: int,
) -> PromptView:
    """Every allowed tool and no menu: the legacy path a loader problem degrades to."""
    return compose(
        session_id=session_id,
        turn=turn,
        path=settings.path,
        mode=mode,
        instructions=settings.instructions,
        specs=allowed,
        menu="",
        eager_tokens=eager_tokens,
    )


def selected_view(
    state: SessionState, settings: Settings, registry: ToolRegistry, planner: Planner
) -> PromptView:
    """The session's loaded tools in ``tools=`` order, led by the meta-tools on native paths."""
    specs = [s for s in (registry.get(n) for n in state.loaded_names()) if s is not None]
    specs = planner.shown([s for s in specs if registry.is_allowed(s.name)])
    choosing = state.selection_mode != "all"
    if choosing and settings.path in NATIVE_PATHS:
        specs = meta_tool_specs() + specs
    return compose(
        session_id=state.session_id,
        turn=state.turn,
        path=settings.path,
        mode=state.selection_mode,
        instructions=settings.instructions,
        specs=specs,
        menu=planner.menu() if choosing else "",
        eager_tokens=planner.eager_tokens(),
    )
