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
from tooltray.memory.core.prompt import NATIVE_PATHS, PromptView, compose, prefix_digest
from tooltray.memory.core.reveal import adds, defers, note, split_loaded, stored_reveals
from tooltray.memory.core.session import SessionState, ViewMode
from tooltray.memory.metatools.meta_tools import shown_meta_specs
from tooltray.memory.store.records import TurnRecord
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import canonical_json
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
    and (``reveal = "append"``) the tools revealed since the last boundary, after it: natively
    deferred where the provider defers tools, else through notes and the ``call_tool`` bridge."""
    meta = state.snapshot.meta
    stored = meta.get("prefix") if settings.reveal == "append" else None
    prefix_names, revealed_names = split_loaded(state.loaded_names(), stored)
    specs = planner.shown(_allowed(registry, prefix_names))
    choosing = state.selection_mode != "all"
    native = settings.path in NATIVE_PATHS
    deferring = defers(settings.path, settings.reveal, meta)
    if choosing and native:
        specs = shown_meta_specs(settings.reveal, deferring) + specs
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
    loaded = view.loaded + tuple(s.name for s in revealed)
    view = replace(view, revealed=tuple(revealed), loaded=loaded)
    reveals = _by_turn(stored_reveals(meta.get("reveals")) if stored is not None else [])
    if deferring:
        addition = adds(settings.path, settings.tool_addition, meta)
        return replace(_deferring(view, registry, reveals), addition=addition)
    return replace(view, notes=_notes(reveals, registry, planner, native))


def _deferring(
    view: PromptView, registry: ToolRegistry, reveals: dict[int, list[str]]
) -> PromptView:
    """``view`` for a provider that defers tools: every allowed tool outside its full part is
    declared deferred in catalog order, so ``tools=`` changes only at boundaries, and each
    turn's reveals are kept as tools for the provider's own search answer."""
    shown = {s.name for s in view.specs}
    view = replace(
        view,
        deferring=True,
        deferred=tuple(s for s in registry.allowed() if s.name not in shown),
        bundles=tuple(registry.bundles()),
        reveals=tuple((t, tuple(_allowed(registry, n))) for t, n in reveals.items()),
    )
    return replace(
        view, prefix_hash=prefix_digest(view.system_prefix, canonical_json(view.tools()))
    )


def _allowed(registry: ToolRegistry, names: Sequence[str]) -> list[ToolSpec]:
    specs = [s for s in (registry.get(n) for n in names) if s is not None]
    return [s for s in specs if registry.is_allowed(s.name)]


def _by_turn(reveals: Sequence[tuple[int, list[str]]]) -> dict[int, list[str]]:
    """The stored reveals' names per user turn, each once (a turn's reveals share one note)."""
    by_turn: dict[int, list[str]] = {}
    for turn, names in reveals:
        by_turn.setdefault(turn, []).extend(names)
    return {turn: list(dict.fromkeys(names)) for turn, names in by_turn.items()}


def _notes(
    reveals: dict[int, list[str]], registry: ToolRegistry, planner: Planner, native: bool
) -> tuple[tuple[int, str], ...]:
    """Each turn's reveal note, keyed by its user turn."""
    out = []
    for turn, names in reveals.items():
        text = note(planner.shown(_allowed(registry, names)), native)
        if text:
            out.append((turn, text))
    return tuple(out)


def turn_record(state: SessionState, view: PromptView) -> tuple[TurnRecord, bool] | None:
    """The ``turns`` row ``view`` calls for (one per turn, again when its prefix or its loaded
    count changed), and
    whether the prefix changed from the last one handed out (remembered in ``state``)."""
    same = view.prefix_hash == state.prefix_hash
    kept = same and state.recorded_count == len(view.loaded)
    if state.health == "disabled" or (kept and state.recorded_turn == state.turn):
        return None
    changed = not same and state.prefix_hash is not None
    state.prefix_hash, state.recorded_turn = view.prefix_hash, state.turn
    state.recorded_count = len(view.loaded)
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
