"""The meta-tools the model uses to manage its own tools: specs, arguments, effects and dispatch.

Models send garbage (a string where a list belongs, JSON inside a string, unknown keys), so parsing
accepts every reasonable shape and otherwise raises
:class:`~tooltray.tools.errors.MetaToolArgumentError` with a message the model can act on. Each
handler (:data:`HANDLERS`, one per meta-tool) returns an :class:`Outcome`: the :class:`Changes` to
store, a short text for the model (what loaded, what is unknown with the closest names, what was
refused and why) and which escape hatch it was. Handlers stay free of storage and signals: the
trinket turns the outcome into its decision, stores it once and signals after it, so a gateway or
an adapter sees the same effects and the same signals.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal, Protocol

from tooltray.memory.retrieval.scoring import ALWAYS, Candidate
from tooltray.memory.store.records import Changes, HistoryEvent, Load, SessionSnapshot, Unload
from tooltray.memory.tuning import MENTION_BUNDLES
from tooltray.tools.errors import (
    MetaToolArgumentError,
    ToolNotAllowedError,
    UnknownToolError,
    shown,
)
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import NOT_JSON, NOT_OBJECT, TOO_DEEP, ToolSpec, decode_arguments

LOAD_TOOLS = "load_tools"
UNLOAD_TOOLS = "unload_tools"
FALLBACK = "fallback"
READ_RESULT = "read_result"
META_TOOL_NAMES = (LOAD_TOOLS, UNLOAD_TOOLS, FALLBACK, READ_RESULT)
EVERY_TOOL = "*"
"""``load_tools({"tools": ["*"]})``: every allowed tool for this turn, the same as ``fallback``,
or on a catalog that costs more to list than a round trip by name, every tool's name
(:func:`directory`). Revealing by appending shows only ``load_tools``, so the last resort costs
no schema of its own."""
CALL_TOOL = "call_tool"
"""The bridge (``reveal = "append"`` on native paths): calls a tool revealed at the end of the
context, which is not in ``tools=``. Not a meta-tool: the call runs the named tool."""
MAX_ITEMS = 64
MAX_ITEM_CHARS = 200
MAX_RAW_ITEMS = 4 * MAX_ITEMS  # entries read at all, repeats included (checked before dedupe)
_BARE_NAMES = re.compile(r"\s*[\w.*-]+\s*([,;]\s*[\w.*-]+\s*)*")
SHAPES = {
    "load_tools": '{"tools": ["name or bundle"]}, {"tools": ["*"]} or {"query": "the task"}',
    "unload_tools": '{"tools": ["name"]}',
    "read_result": '{"handle": "r-...", "offset": 0}',
    "call_tool": '{"name": "tool_name", "arguments": {...}}',
}

_NAMES_SCHEMA = {
    "type": "array",
    "items": {"type": "string"},
    "description": "Tool names or bundle names.",
}


def meta_tool_specs(*, with_read_result: bool = True) -> list[ToolSpec]:
    """The meta-tools in the fixed order they lead every ``tools=`` list."""
    return list(_meta_specs(with_read_result))


@cache
def _meta_specs(with_read_result: bool) -> tuple[ToolSpec, ...]:
    """Built and validated once: the specs are frozen and the same on every call."""
    specs = [
        ToolSpec(
            name=LOAD_TOOLS,
            description=(
                'Load tools by name or bundle (`tools`; ["*"]: every tool, this turn only) or by '
                "task (`query`)."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "tools": {"type": "array", "items": {"type": "string"}},
                    "query": {"type": "string"},
                },
            },
            source="meta",
        ),
        ToolSpec(
            name=UNLOAD_TOOLS,
            description="Unload tools you no longer need, to keep the tool list short.",
            parameters={
                "type": "object",
                "properties": {"tools": _NAMES_SCHEMA},
                "required": ["tools"],
            },
            source="meta",
        ),
        ToolSpec(
            name=FALLBACK,
            description=(
                "Make every available tool callable for this turn only, when you cannot find "
                "the tool you need. Use load_tools first when you know the name."
            ),
            parameters={
                "type": "object",
                "properties": {"reason": {"type": "string", "description": "Why."}},
            },
            source="meta",
        ),
    ]
    if with_read_result:
        specs.append(
            ToolSpec(
                name=READ_RESULT,
                description="Read more of a long tool result that was shortened with a handle.",
                parameters={
                    "type": "object",
                    "properties": {
                        "handle": {"type": "string", "description": "The result handle."},
                        "offset": {"type": "integer", "minimum": 0, "default": 0},
                    },
                    "required": ["handle"],
                },
                source="meta",
            )
        )
    return tuple(specs)


@cache
def shown_meta_specs(reveal: str, deferring: bool = False) -> tuple[ToolSpec, ...]:
    """The meta-tools ``tools=`` leads with. Revealing by appending shows only ``load_tools``
    and the ``call_tool`` bridge: unloading saves nothing while the prefix stays fixed,
    ``read_result`` is named in every shortened result (so both are reached through the
    bridge), and ``fallback`` is ``load_tools(["*"])``; every call pays the fixed part, so each
    schema left out is saved on every call of every session. Where the provider defers tools
    (``deferring``) there is no bridge: it makes revealed tools callable itself, so
    ``read_result`` is shown in its place."""
    specs = _meta_specs(True)
    if reveal != "append":
        return specs
    if deferring:
        return tuple(s for s in specs if s.name in (LOAD_TOOLS, READ_RESULT))
    return (*(s for s in specs if s.name == LOAD_TOOLS), bridge_spec())


@cache
def bridge_spec() -> ToolSpec:
    """``call_tool``: byte-stable in ``tools=``, it reaches every tool revealed after it."""
    return ToolSpec(
        name=CALL_TOOL,
        description="Call a tool listed in the conversation but not here (also read_result).",
        parameters={
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "arguments": {"type": "object", "additionalProperties": True},
            },
            "required": ["name"],
        },
        source="meta",
    )


def parse_bridge(arguments: Any) -> tuple[str, Any]:
    """``call_tool`` arguments as ``(tool name, its raw arguments)``.

    Raises:
        MetaToolArgumentError: no usable ``name``, or ``call_tool`` naming itself.
    """
    args = _as_dict(arguments, CALL_TOOL)
    name = args.get("name", args.get("tool"))
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_ITEM_CHARS:
        raise MetaToolArgumentError(
            "call_tool needs the revealed tool's `name` and its `arguments`: e.g. "
            'call_tool({"name": "get_weather", "arguments": {"city": "Oslo"}}).'
        )
    if name.strip() == CALL_TOOL:
        raise MetaToolArgumentError(
            "call_tool calls another tool: give that tool's name in `name`."
        )
    return name.strip(), args.get("arguments", {})


@dataclass(frozen=True)
class LoadRequest:
    """Parsed ``load_tools`` arguments: names (tools or bundles) and an optional search query."""

    names: tuple[str, ...]
    query: str | None


def _as_dict(arguments: Any, tool: str) -> dict[str, Any]:
    decoded = decode_arguments(arguments)
    if decoded.fault == NOT_JSON:
        if _BARE_NAMES.fullmatch(arguments):  # "calendar, weather": names, not JSON
            return {"tools": arguments}
        raise MetaToolArgumentError(
            f"{tool}: the arguments are not JSON (got {shown(arguments, 60)}); send a JSON "
            f"object like {SHAPES.get(tool, '{}')}."
        )
    if decoded.fault == TOO_DEEP:
        raise MetaToolArgumentError(
            f"{tool}: the arguments are nested too deeply to read; send a flat object like "
            '{"tools": ["name"]}.'
        )
    if decoded.fault == NOT_OBJECT:
        raise MetaToolArgumentError(
            f"{tool} takes a JSON object of arguments, got {type(decoded.value).__name__}: "
            f'call it like {tool}({{"tools": ["name"]}}).'
        )
    return dict(decoded.value)


def _as_names(value: Any, tool: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.replace(";", ",").split(",")
    if not isinstance(value, (list, tuple)):
        raise MetaToolArgumentError(
            f"{tool}: `tools` must be a list of names, got {type(value).__name__}: "
            'pass ["tool_a", "bundle_b"].'
        )
    if len(value) > MAX_RAW_ITEMS:  # bounded before any per-item work
        raise MetaToolArgumentError(
            f"{tool}: {len(value)} names in one call; send at most {MAX_ITEMS} distinct names."
        )
    names: dict[str, None] = {}  # insertion-ordered, so removing repeats stays linear
    for item in value:
        if not isinstance(item, str):
            raise MetaToolArgumentError(
                f"{tool}: every entry of `tools` must be a string name, got {shown(item, 60)}."
            )
        item = item.strip()
        if len(item) > MAX_ITEM_CHARS:
            raise MetaToolArgumentError(
                f"{tool}: a name of {len(item)} characters is too long; names have at most 64."
            )
        if item:
            names[item] = None
    if len(names) > MAX_ITEMS:
        raise MetaToolArgumentError(f"{tool}: at most {MAX_ITEMS} names per call.")
    return tuple(names)


def parse_load(arguments: Any) -> LoadRequest:
    """Parse ``load_tools`` arguments; needs at least one name or a query."""
    args = _as_dict(arguments, LOAD_TOOLS)
    names = _as_names(args.get("tools", args.get("names", args.get("bundles"))), LOAD_TOOLS)
    query = args.get("query")
    if query is not None and not isinstance(query, str):
        raise MetaToolArgumentError("load_tools: `query` must be a string describing the task.")
    query = (query or "").strip()[:1000] or None
    if not names and not query:
        raise MetaToolArgumentError(
            "load_tools needs `tools` (names from the bundle menu) or a `query`: e.g. "
            'load_tools({"tools": ["calendar"]}) or load_tools({"query": "book a flight"}).'
        )
    return LoadRequest(names=names, query=query)


def parse_unload(arguments: Any) -> tuple[str, ...]:
    """Parse ``unload_tools`` arguments; needs at least one name."""
    names = _as_names(_as_dict(arguments, UNLOAD_TOOLS).get("tools"), UNLOAD_TOOLS)
    if not names:
        raise MetaToolArgumentError(
            'unload_tools needs `tools`: e.g. unload_tools({"tools": ["weather_forecast"]}).'
        )
    return names


def parse_read_result(arguments: Any) -> tuple[str, int]:
    """Parse ``read_result`` arguments into (handle, offset)."""
    args = _as_dict(arguments, READ_RESULT)
    handle = args.get("handle", args.get("tools"))
    if not isinstance(handle, str) or not handle.strip():
        raise MetaToolArgumentError(
            "read_result needs the `handle` shown in the shortened result: "
            'read_result({"handle": "r-...", "offset": 0}).'
        )
    if len(handle.strip()) > MAX_ITEM_CHARS:
        raise MetaToolArgumentError(
            f"read_result: a handle of {len(handle.strip())} characters cannot be one; copy the "
            'short `handle` shown in the shortened result, e.g. read_result({"handle": "r-..."}).'
        )
    offset = args.get("offset", 0)
    try:
        offset = int(offset)
    except (TypeError, ValueError, OverflowError):
        raise MetaToolArgumentError("read_result: `offset` must be a whole number.") from None
    return handle.strip(), max(0, offset)


Search = Callable[[str], Sequence[Candidate]]
Escape = Literal["load_tools", "fallback"]


class SessionState(Protocol):
    """What a meta-tool reads of a live session (the core's ``SessionState`` is one): the
    meta-tools serve the core and never import it."""

    session_id: str
    snapshot: SessionSnapshot
    fallback_turn: int | None

    @property
    def turn(self) -> int: ...


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
    mentioned: list[str] = field(default_factory=list)  # bundles of a search's next matches
    #: the escape hatch the call was (``None``: not one), and whether it opens the turn's fallback
    escape: Escape | None = None
    opens_fallback: bool = False

    def escape_detail(self) -> str | None:
        """The ``escape`` history row's detail for a load through an escape hatch (``None``:
        none). It keeps what the model asked for (``load_tools tools: calendar, git``,
        ``load_tools query: book a flight``, or both joined by ``; ``): the names and words it
        loaded by are what ``history`` needs to show why the selection missed."""
        if not (self.escape and self.added):
            return None
        asked = [f"tools: {', '.join(self.asked)}"] if self.asked else []
        asked += [f"query: {self.query}"] if self.query else []
        return f"{self.escape} {'; '.join(asked)}"[:500] if asked else self.escape


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
) -> tuple[list[str], list[str], set[str]]:
    """The tools ``names`` ask for (bundles by their members), the unknown names with hints,
    and the tools named one by one."""
    wanted: list[str] = []
    unknown: list[str] = []
    alone: set[str] = set()
    for name in names:
        members = _bundle_members(registry, name)
        if members is not None:
            wanted += members
            continue
        try:
            wanted.append(registry.resolve(name).name)
            alone.add(wanted[-1])
        except ToolNotAllowedError:
            out.refused.append(name)
            out.changes.events.append(_refuse(state, name, "not in the allow-list"))
        except UnknownToolError as exc:
            hint = exc.candidates or _closest(registry, name)
            unknown.append(f"{name} (did you mean: {', '.join(hint)}?)" if hint else name)
    return wanted, unknown, alone


def load_tools(
    registry: ToolRegistry,
    state: SessionState,
    request: LoadRequest,
    search: Search,
    hard_max: int,
    named: Collection[str] = (),
) -> Outcome:
    """Append the named tools, bundles' members and query matches to the loaded set.

    ``hard_max`` holds back bulk growth (a bundle, a query's matches), not a tool the model
    names alone: that one loads past it, so a full set answers a refused bundle with its
    members' names and the model loads the one it needs, not the fallback's directory. In a
    turn whose fallback answered with a directory, a bundle named from it loads past ``hard_max``
    too (as the fallback's own loads do). The set still never shrinks mid-session. A query's
    answer also names the bundles of its next matches that the menu does not (``named``): where
    the needed tool's server is in neither, the model loads it from there, not from the
    fallback's directory (a round trip and ~700 tokens on mcp300; ``bench/README.md``, stop 44)."""
    out = Outcome(Changes(), "", query=request.query, asked=request.names)
    wanted, unknown, alone = _resolve_names(registry, state, request.names, out)
    past_cap = set(wanted) if state.fallback_turn == state.turn else alone
    found = search(request.query) if request.query else ()
    wanted += [c.name for c in found if not c.mention and registry.is_allowed(c.name)]
    loaded = state.snapshot.names()
    held = set(loaded)  # the set does not change while the call decides
    room = hard_max - len(loaded)
    for name in dict.fromkeys(wanted):
        if name in held and not _is_fallback(state, name):
            continue
        if room <= 0 and name not in past_cap:
            out.refused.append(name)
            out.changes.events.append(_refuse(state, name, f"loaded set is full ({hard_max})"))
            continue
        out.changes.loads.append(Load(name, "escape", state.turn))
        out.added.append(name)
        room -= 1
    already = [n for n in dict.fromkeys(wanted) if n in held and n not in out.added]
    out.mentioned = [c.name for c in found if c.mention and c.name not in named][:MENTION_BUNDLES]
    out.text = _load_text(out, already, unknown, request.query, hard_max)
    return out


def _is_fallback(state: SessionState, name: str) -> bool:
    return any(t.name == name and t.fallback for t in state.snapshot.loaded)


LOADED = "Loaded: {}. They are callable on your next step."
"""What a load answer says it loaded (the names, joined by commas)."""
MENTIONED = "Bundles of the next matches (load one by name if it fits):\n- bundles: {}"
"""The bundles of a search's next matches that the menu does not name."""
LISTED = "Loaded {} tool{}, listed below. They are callable on your next step."
"""The same when the answer's reveal note lists each loaded tool on its own line, name first:
how many, so no name is paid for twice."""


def _load_text(
    out: Outcome, already: list[str], unknown: list[str], query: str | None, hard_max: int
) -> str:
    parts = [LOADED.format(", ".join(out.added))] if out.added else []
    if already:
        parts.append(f"Already loaded: {', '.join(already)}.")
    if unknown:
        parts.append(f"Unknown: {'; '.join(unknown)}.")
    if out.refused:
        parts.append(
            f"Refused: {', '.join(out.refused)} (not allowed, or the set is at {hard_max} "
            "tools: name the ones you need alone, or unload_tools some first)."
        )
    if not parts:
        parts.append(f"Nothing matched {query!r}." if query else "Nothing to load.")
    text = " ".join(parts)
    return f"{text}\n{MENTIONED.format(', '.join(out.mentioned))}" if out.mentioned else text


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


DIRECTORY_HEAD = (
    "Too many tools to list them all ({n}); here are their names by bundle. Load the ones "
    'you need by name: load_tools({{"tools": ["<name>", ...]}}).'
)
BUNDLES_HEAD = (
    "Too many tools to name them all ({n} in {b} bundles); here are the bundles{rest}. Load the "
    'one you need by name, load_tools({{"tools": ["<bundle>"]}}), or describe the tool: '
    'load_tools({{"query": "..."}}).'
)
BUNDLES_REST = " beyond the {m} the menu names"
BUNDLES_LINE = "- bundles: "
FallbackAnswer = Literal["listing", "names", "bundles"]
"""What ``load_tools(["*"])`` answers: every tool's listing, the names by bundle, or the
bundles alone (:func:`~tooltray.memory.core.policy.lists_everything` picks, per catalog)."""


def directory(
    registry: ToolRegistry, bundles_only: bool = False, named: Collection[str] = ()
) -> str:
    """Every allowed tool's name by bundle, one line a bundle (tools in no bundle last), or with
    ``bundles_only`` the bundles' names alone (:func:`bundle_directory`): what the fallback shows
    instead of every listing on a catalog too large to list."""
    groups, rest = _grouped(registry)
    if bundles_only:
        return bundle_directory(groups, rest, named, len(registry.allowed()))
    lines = [f"- {bundle}: {', '.join(members)}" for bundle, members in groups]
    lines += [f"- (no bundle): {', '.join(rest)}"] if rest else []
    return "\n".join([DIRECTORY_HEAD.format(n=len(registry.allowed())), *lines])


def bundle_directory(
    groups: Sequence[tuple[str, list[str]]], rest: Sequence[str], named: Collection[str], n: int
) -> str:
    """The bundles on one line, names only as the menu's names line shows them (a bundle loads
    by its name), less those the menu already names (``named``): the prompt shows them on every
    call, and this answer stays in the conversation for the rest of the session. On mcp300 the
    300 bundles one a line with their sizes took 2,356 tokens (bench/README.md, stop 42)."""
    shown = [bundle for bundle, _ in groups if bundle not in named]
    more = BUNDLES_REST.format(m=len(groups) - len(shown)) if len(shown) < len(groups) else ""
    lines = [BUNDLES_HEAD.format(n=n, b=len(groups), rest=more)]
    lines += [BUNDLES_LINE + ", ".join(shown)] if shown else []
    lines += [f"- (no bundle): {', '.join(rest)}"] if rest else []
    return "\n".join(lines)


def _grouped(registry: ToolRegistry) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """The allowed tools by bundle (a tool in its first bundle only), and those in none."""
    placed: set[str] = set()
    groups: list[tuple[str, list[str]]] = []
    for bundle in registry.bundles():
        members = [m for m in bundle.members if registry.is_allowed(m) and m not in placed]
        placed.update(members)
        groups += [(bundle.name, members)] if members else []
    return groups, [s.name for s in registry.allowed() if s.name not in placed]


def fallback(
    registry: ToolRegistry,
    state: SessionState,
    *,
    answer: FallbackAnswer = "listing",
    named: Collection[str] = (),
) -> Outcome:
    """Load every allowed tool for this turn only (marked fallback; expires at turn end), or
    (the catalog costs more to list than a round trip by name) load nothing and answer with
    the :func:`directory` of names, or of bundles alone."""
    if answer != "listing":
        return Outcome(Changes(), directory(registry, answer == "bundles", named))
    out = Outcome(Changes(), "")
    loaded = state.snapshot.names()
    held = set(loaded)
    for spec in registry.allowed():
        if spec.name not in held:
            out.changes.loads.append(Load(spec.name, "fallback", state.turn, fallback=True))
            out.added.append(spec.name)
    total = len(loaded) + len(out.added)
    out.text = (
        f"Fallback: all {total} allowed tools are callable for this turn only; "
        "the tools you use stay loaded afterwards."
    )
    return out


ReadResult = Callable[[str, int], str]


def _listing() -> FallbackAnswer:
    return "listing"


@dataclass(frozen=True)
class MetaCall:
    """One meta-tool call as its handler reads it: the arguments, the session, and what the
    catalog and the result shelf answer (asked only by the handler that needs them).

    ``answer`` says what ``load_tools(["*"])`` answers: every tool's listing or a directory
    (which opens the turn's fallback, so a name read in it loads even into a full set);
    ``named``, the bundles the prompt's menu names (a directory of bundles leaves them out).
    """

    name: str
    arguments: Any
    registry: ToolRegistry
    state: SessionState
    search: Search
    read: ReadResult
    hard_max: int
    answer: Callable[[], FallbackAnswer] = _listing
    named: Callable[[], Collection[str]] = tuple


def _load(call: MetaCall) -> Outcome:
    request = parse_load(call.arguments)
    if EVERY_TOOL not in request.names:
        out = load_tools(
            call.registry, call.state, request, call.search, call.hard_max, call.named()
        )
        out.escape = "load_tools"
        return out
    shown = call.answer()
    if shown == "listing":
        return _fallback(call)
    out = fallback(call.registry, call.state, answer=shown, named=call.named())
    out.escape, out.opens_fallback = "fallback", True
    return out


def _unload(call: MetaCall) -> Outcome:
    return unload_tools(call.registry, call.state, parse_unload(call.arguments))


def _fallback(call: MetaCall) -> Outcome:
    """The ``fallback`` tool promises every tool callable, so it always lists them."""
    out = fallback(call.registry, call.state)
    out.escape, out.opens_fallback = "fallback", True
    return out


def _read(call: MetaCall) -> Outcome:
    handle, offset = parse_read_result(call.arguments)
    return Outcome(Changes(), call.read(handle, offset))


def not_meta(call: MetaCall) -> Outcome:
    """What a name outside :data:`HANDLERS` gets: a refusal the model can act on."""
    raise MetaToolArgumentError(f"{call.name!r} is not a meta-tool: use one of {META_TOOL_NAMES}.")


Handler = Callable[[MetaCall], Outcome]
HANDLERS: dict[str, Handler] = {
    LOAD_TOOLS: _load,
    UNLOAD_TOOLS: _unload,
    FALLBACK: _fallback,
    READ_RESULT: _read,
}
"""Each meta-tool's handler: it parses the arguments and returns the :class:`Outcome`, or
raises :class:`~tooltray.tools.errors.MetaToolArgumentError` for unusable ones; a name that is
not a meta-tool gets :func:`not_meta`."""
