"""The two prompt views a session can get: its selection, or every allowed tool.

One home for both, so the trinket (a small catalog, a degraded or disabled loader) and its
clients (an agent whose ``prepare`` failed) render "all tools" the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from tooltray.events import payloads as p
from tooltray.events import signals as sig
from tooltray.memory.config import Settings
from tooltray.memory.core.planner import Planner
from tooltray.memory.core.prompt import NATIVE_PATHS, PromptView, compose
from tooltray.memory.core.reveal import note, split_loaded, stored_reveals
from tooltray.memory.core.session import SessionState, ViewMode
from tooltray.memory.metatools.specs import shown_meta_specs
from tooltray.memory.store.records import TurnRecord
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
    """The session's prefix tools in ``tools=`` order, led by the meta-tools on native paths,
    and (``reveal = "append"``) the tools revealed since the last boundary, after it."""
    meta = state.snapshot.meta
    stored = meta.get("prefix") if settings.reveal == "append" else None
    prefix_names, revealed_names = split_loaded(state.loaded_names(), stored)
    specs = planner.shown(_allowed(registry, prefix_names))
    choosing = state.selection_mode != "all"
    native = settings.path in NATIVE_PATHS
    if choosing and native:
        specs = shown_meta_specs(settings.reveal) + specs
    view = compose(
        session_id=state.session_id,
        turn=state.turn,
        path=settings.path,
        mode=state.selection_mode,
        instructions=settings.instructions,
        specs=specs,
        menu=planner.menu() if choosing else "",
        eager_tokens=planner.eager_tokens(),
    )
    revealed = _allowed(registry, revealed_names)
    reveals = stored_reveals(meta.get("reveals")) if stored is not None else []
    notes = _notes(reveals, registry, planner, native)
    loaded = view.loaded + tuple(s.name for s in revealed)
    return replace(view, revealed=tuple(revealed), notes=notes, loaded=loaded)


def _allowed(registry: ToolRegistry, names: Sequence[str]) -> list[ToolSpec]:
    specs = [s for s in (registry.get(n) for n in names) if s is not None]
    return [s for s in specs if registry.is_allowed(s.name)]


def _notes(
    reveals: Sequence[tuple[int, list[str]]],
    registry: ToolRegistry,
    planner: Planner,
    native: bool,
) -> tuple[tuple[int, str], ...]:
    """Each stored reveal's note, keyed by its user turn (a turn's reveals share one note)."""
    by_turn: dict[int, list[str]] = {}
    for turn, names in reveals:
        by_turn.setdefault(turn, []).extend(names)
    out = []
    for turn, names in by_turn.items():
        text = note(planner.shown(_allowed(registry, list(dict.fromkeys(names)))), native)
        if text:
            out.append((turn, text))
    return tuple(out)


def turn_record(state: SessionState, view: PromptView) -> tuple[TurnRecord, bool] | None:
    """The ``turns`` row ``view`` calls for (one per turn, again when its prefix changed), and
    whether the prefix changed from the last one handed out (remembered in ``state``)."""
    same = view.prefix_hash == state.prefix_hash
    if state.health == "disabled" or (same and state.recorded_turn == state.turn):
        return None
    changed = not same and state.prefix_hash is not None
    state.prefix_hash, state.recorded_turn = view.prefix_hash, state.turn
    record = TurnRecord(
        state.session_id,
        state.turn,
        view.prefix_hash,
        view.tool_tokens,
        len(view.loaded),
        view.eager_tokens,
    )
    return record, changed


def announce_prefix(state: SessionState, view: PromptView) -> None:
    """Send ``selection-changed``: the view's prefix differs from the last one handed out."""
    changed = p.SelectionChanged(
        turn=state.turn, added=[], removed=[], prefix_hash=view.prefix_hash
    )
    sig.emit(sig.selection_changed, state.session_id, changed)
