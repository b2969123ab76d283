"""What each meta-tool call changes, as pure functions: the trinket only commits the result.

Each handler returns the :class:`Changes` to store and a short text for the model saying what was
loaded, what is unknown (with the closest names), and what was refused and why.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from tooltray.memory.metatools.specs import META_TOOL_NAMES, LoadRequest
from tooltray.memory.retrieval.candidates import ALWAYS, Candidate
from tooltray.memory.store.records import Changes, HistoryEvent, Load, SessionSnapshot, Unload
from tooltray.tools.errors import ToolNotAllowedError, UnknownToolError
from tooltray.tools.registry import ToolRegistry

Search = Callable[[str], Sequence[Candidate]]


class SessionState(Protocol):
    """What a meta-tool reads of a live session (the core's ``SessionState`` is one): the
    meta-tools serve the core and never import it."""

    session_id: str
    snapshot: SessionSnapshot
    fallback_turn: int | None

    @property
    def turn(self) -> int: ...

    def loaded_names(self) -> list[str]: ...

    def is_loaded(self, name: str) -> bool: ...


@dataclass
class Outcome:
    """A meta-tool's effect: the changes to store, the model's text, and what was touched."""

    changes: Changes
    text: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    query: str | None = None
    asked: tuple[str, ...] = ()  # the tool and bundle names a load named, as the model wrote them


def _bundle_members(registry: ToolRegistry, name: str) -> list[str] | None:
    for bundle in registry.bundles():
        if bundle.name == name:
            return [m for m in bundle.members if registry.is_allowed(m)]
    return None


def _closest(registry: ToolRegistry, name: str) -> list[str]:
    pool = [s.name for s in registry.allowed()] + [b.name for b in registry.bundles()]
    return difflib.get_close_matches(name, pool, n=3, cutoff=0.5)


def _refuse(state: SessionState, name: str, why: str) -> HistoryEvent:
    return HistoryEvent(state.session_id, state.turn, "refused", tool=name[:64], detail=why)


def _resolve_names(
    registry: ToolRegistry, state: SessionState, names: Sequence[str], out: Outcome
) -> tuple[list[str], list[str]]:
    wanted: list[str] = []
    unknown: list[str] = []
    for name in names:
        members = _bundle_members(registry, name)
        if members is not None:
            wanted += members
            continue
        try:
            wanted.append(registry.resolve(name).name)
        except ToolNotAllowedError:
            out.refused.append(name)
            out.changes.events.append(_refuse(state, name, "not in the allow-list"))
        except UnknownToolError as exc:
            hint = exc.candidates or _closest(registry, name)
            unknown.append(f"{name} (did you mean: {', '.join(hint)}?)" if hint else name)
    return wanted, unknown


def load_tools(
    registry: ToolRegistry,
    state: SessionState,
    request: LoadRequest,
    search: Search,
    hard_max: int,
) -> Outcome:
    """Append the named tools, bundles' members and query matches to the loaded set."""
    out = Outcome(Changes(), "", query=request.query, asked=request.names)
    wanted, unknown = _resolve_names(registry, state, request.names, out)
    if request.query:
        wanted += [c.name for c in search(request.query) if registry.is_allowed(c.name)]
    already = [n for n in dict.fromkeys(wanted) if state.is_loaded(n) and n not in out.added]
    room = hard_max - len(state.loaded_names())
    for name in dict.fromkeys(wanted):
        if state.is_loaded(name) and not _is_fallback(state, name):
            continue
        if room <= 0:
            out.refused.append(name)
            out.changes.events.append(_refuse(state, name, f"loaded set is full ({hard_max})"))
            continue
        out.changes.loads.append(Load(name, "escape", state.turn))
        out.added.append(name)
        room -= 1
    already = [n for n in already if n not in out.added]
    out.text = _load_text(out, already, unknown, request.query, hard_max)
    return out


def _is_fallback(state: SessionState, name: str) -> bool:
    return any(t.name == name and t.fallback for t in state.snapshot.loaded)


def _load_text(
    out: Outcome, already: list[str], unknown: list[str], query: str | None, hard_max: int
) -> str:
    parts = []
    if out.added:
        parts.append(f"Loaded: {', '.join(out.added)}. They are callable on your next step.")
    if already:
        parts.append(f"Already loaded: {', '.join(already)}.")
    if unknown:
        parts.append(f"Unknown: {'; '.join(unknown)}.")
    if out.refused:
        parts.append(
            f"Refused: {', '.join(out.refused)} (not allowed, or the set is at {hard_max} "
            "tools: unload_tools some first)."
        )
    if not parts:
        parts.append(f"Nothing matched {query!r}." if query else "Nothing to load.")
    return " ".join(parts)


def _unload_names(registry: ToolRegistry, names: Sequence[str], loaded: set[str]) -> list[str]:
    """``names`` with each bundle (or MCP server) name replaced by its loaded members and each
    other spelling ``load_tools`` accepts (``mcp__server__tool``) by the tool's own name, so what
    the model loaded by one name it can unload by the same one."""
    out: list[str] = []
    for name in names:
        members = _bundle_members(registry, name)
        if members is not None and name not in loaded:
            out += [m for m in members if m in loaded] or [name]
            continue
        try:
            spec = registry.resolve(name)
        except (ToolNotAllowedError, UnknownToolError):
            out.append(name)
            continue
        out.append(spec.name if spec.name in loaded else name)
    return list(dict.fromkeys(out))


def unload_tools(registry: ToolRegistry, state: SessionState, names: Sequence[str]) -> Outcome:
    """Remove tools from the loaded set; CORE, pinned and meta-tools refuse."""
    out = Outcome(Changes(), "")
    sources = {t.name: t.source for t in state.snapshot.loaded}
    missing: list[str] = []
    for name in _unload_names(registry, names, set(sources)):
        if name in META_TOOL_NAMES or sources.get(name) in ALWAYS:
            out.refused.append(name)
            out.changes.events.append(_refuse(state, name, "core tools cannot be unloaded"))
        elif name in sources:
            out.changes.unloads.append(Unload(name, "unloaded"))
            out.removed.append(name)
        else:
            hint = [n for n in _closest(registry, name) if n in sources]
            missing.append(f"{name} (loaded ones like it: {', '.join(hint)})" if hint else name)
    parts = [f"Unloaded: {', '.join(out.removed)}."] if out.removed else []
    if out.refused:
        parts.append(f"Refused: {', '.join(out.refused)} (core tools stay loaded).")
    if missing:
        parts.append(f"Not loaded: {'; '.join(missing)}.")
    out.text = " ".join(parts)
    return out


def fallback(registry: ToolRegistry, state: SessionState) -> Outcome:
    """Load every allowed tool for this turn only (marked fallback; expires at turn end)."""
    out = Outcome(Changes(), "")
    for spec in registry.allowed():
        if not state.is_loaded(spec.name):
            out.changes.loads.append(Load(spec.name, "fallback", state.turn, fallback=True))
            out.added.append(spec.name)
    total = len(state.loaded_names()) + len(out.added)
    out.text = (
        f"Fallback: all {total} allowed tools are callable for this turn only; "
        "the tools you use stay loaded afterwards."
    )
    return out
