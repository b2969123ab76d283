"""The session bench's price comparison: tooltray's replayed calls beside eager, the oracle and
two search-only peers, each session priced call by call (``pricing.py``) under both profiles.

Every approach plays the same conversations with the same transcript rules (``layout.py``): per
turn, the turn's user messages, one call per gold tool (its output, then its result), and a
final call for the answer. What differs is the prefix each call sends and the extra calls:

- **tooltray**: the prefix the trinket rendered for each call (meta-tools and loaded tools, the
  system text with the bundle menu), and one more call per escape (``load_tools``,
  ``fallback``) with the meta-tool's answer as its result; with ``reveal = "append"`` the
  tools a later turn reveals are in a note woven before that turn's user message, not in the
  prefix, so they are new once and cached from then on;
- **eager**: every allowed tool and the instructions, never changing;
- **oracle**: the session's own gold tools (every turn's, in first-use order) from its first
  call, never changing;
- **perfect search**: only pydantic-ai's ``search_tools`` tool; each needed tool costs one
  search call whose result appends that tool's definition at the end of the context (as
  Anthropic's ``tool_reference`` and OpenAI's ``tool_search_output`` do);
- **real search**: the same tool answered by pydantic-ai's own keyword search
  (``ToolSearchToolset``, undiscovered tools first) with the top :data:`TOP_K`. The simulated
  model writes what a real one could: first the user's message, then the conversation's user
  messages so far; a repeat of that query gets the next undiscovered matches. A tool still not
  found after :data:`MAX_SEARCHES` searches is charged those searches and counted a miss.

Peers use the tools' own descriptions (tooltray's ``boilerplate_once`` is tooltray's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from corpora import Conversation, Turn
from layout import Transcript, as_segments, segment, system_segments, tool_segments
from pricing import PROFILES, Segment, price_session
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import FunctionToolset
from pydantic_ai.toolsets._tool_search import (  # type: ignore[attr-defined]
    _DEFAULT_TOOL_DESCRIPTION,
    _NO_MATCHES_MESSAGE,
    _SEARCH_TOOL_SCHEMA,
    _SEARCH_TOOLS_NAME,
    ToolSearchToolset,
)

from tooltray.memory.core.prompt import text_block
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import NATIVE_PATHS
from tooltray.tools.spec import ToolSpec

TOP_K = 5
"""Matches one search returns (Anthropic's tool search returns 3-5 ``tool_reference`` blocks;
pydantic-ai's default is 10)."""

MAX_SEARCHES = 5
"""Searches the real-search peer spends on one tool before it is counted a miss."""

SEARCH_SPEC = ToolSpec(
    name=_SEARCH_TOOLS_NAME, description=_DEFAULT_TOOL_DESCRIPTION, parameters=_SEARCH_TOOL_SCHEMA
)
APPROACHES = ("tooltray", "eager", "oracle", "perfect_search", "real_search")

Find = Callable[[str, set[str], str], list[str]]


@dataclass
class Played:
    """One approach's session: its transcript, and the searches it made and missed."""

    transcript: Transcript
    searches: int = 0
    misses: int = 0


def prefix(path: str, instructions: str, specs: Sequence[ToolSpec]) -> list[Segment]:
    """A fixed prefix: ``tools=`` then the instructions (native), or the instructions and the
    tool block (text), laid out as the trinket lays out its own."""
    if path in NATIVE_PATHS:
        return tool_segments(path, specs) + system_segments(instructions)
    block = text_block(specs)
    return system_segments(f"{instructions}\n\n{block}", block)


def _users(turn: Turn) -> list[str]:
    return [*turn.earlier, turn.query]


def play_fixed(conv: Conversation, fixed: Sequence[Segment]) -> Played:
    """Eager or the oracle: the same prefix on every call, no extra calls."""
    t = Transcript()
    for turn in conv.turns:
        t.users(_users(turn))
        for tool in turn.gold:
            t.call(fixed, "step", [t.result(tool)])
        t.call(fixed, "step")
    return Played(t)


def play_tooltray(
    conv: Conversation, calls: Sequence[Sequence[Sequence[Any]]], notes: Sequence[str] = ()
) -> Played:
    """tooltray's replayed calls (``session.TurnResult.calls``: kind, detail, prefix), and
    per turn the reveal note woven before its user message (``TurnResult.note``; none: "")."""
    t = Transcript()
    woven = list(notes) or [""] * len(conv.turns)
    for turn, turn_calls, note in zip(conv.turns, calls, woven, strict=True):
        t.users(_users(turn), note)
        for kind, detail, raw in turn_calls:
            t.call(as_segments(raw), kind, _answer(t, kind, str(detail)))
    return Played(t)


def _answer(t: Transcript, kind: str, detail: str) -> list[Segment]:
    """What follows a tooltray call: the meta-tool's answer, a tool's result, or nothing."""
    if kind == "escape":
        return [segment(detail)]
    return [t.result(detail)] if kind == "tool" else []


def reveal(path: str, specs: Sequence[ToolSpec]) -> list[Segment]:
    """A search result: the found tools' definitions appended to the context, or the no-match
    message."""
    return tool_segments(path, specs) if specs else [segment(_NO_MATCHES_MESSAGE)]


def play_search(
    conv: Conversation,
    fixed: Sequence[Segment],
    find: Find,
    catalog: dict[str, ToolSpec],
    path: str,
) -> Played:
    """A search-only agent: each tool it lacks costs searches until a result reveals it."""
    out, found = Played(Transcript()), set[str]()
    t = out.transcript
    for turn in conv.turns:
        t.users(_users(turn))
        queries = [turn.query, " ".join(_users(turn))]
        for tool in turn.gold:
            n = 0
            while tool not in found:
                hits = [h for h in find(queries[min(n, 1)], found, tool) if h not in found]
                n += 1
                if n >= MAX_SEARCHES and tool not in hits:
                    hits.append(tool)
                    out.misses += 1
                t.call(fixed, "search", reveal(path, [catalog[h] for h in hits]))
                found.update(hits)
                out.searches += 1
            t.call(fixed, "step", [t.result(tool)])
        t.call(fixed, "step")
    return out


def perfect(query: str, found: set[str], tool: str) -> list[str]:
    """A search that always returns exactly the tool the model needs."""
    return [tool]


class KeywordSearch:
    """pydantic-ai's own local tool search (``ToolSearchToolset``'s keyword overlap, ranked
    undiscovered first, cut at ``max_results``), run over one catalog."""

    def __init__(self, specs: Sequence[ToolSpec], k: int = TOP_K) -> None:
        self.toolset = ToolSearchToolset(FunctionToolset(), max_results=k)
        self.corpus = [
            ToolDefinition(
                name=s.name, description=s.description, parameters_json_schema=s.parameters
            )
            for s in specs
        ]

    def __call__(self, query: str, found: set[str], tool: str) -> list[str]:
        tool_view: Any = SimpleNamespace(corpus=self.corpus, discovered_tool_names=set(found))
        answer = self.toolset._run_keywords_search([query], tool_view)
        return [m["name"] for m in answer["discovered_tools"]]


def play_all(
    conv: Conversation,
    registry: ToolRegistry,
    path: str,
    instructions: str,
    calls: Sequence[Sequence[Sequence[Any]]],
    notes: Sequence[str] = (),
) -> dict[str, Played]:
    """Every approach on one conversation (``calls``, ``notes``: tooltray's replayed calls and
    reveal notes, one per turn)."""
    allowed = registry.allowed()
    catalog = {s.name: s for s in allowed}
    gold = list(dict.fromkeys(g for turn in conv.turns for g in turn.gold if g in catalog))
    search = prefix(path, instructions, [SEARCH_SPEC])
    return {
        "tooltray": play_tooltray(conv, calls, notes),
        "eager": play_fixed(conv, prefix(path, instructions, allowed)),
        "oracle": play_fixed(conv, prefix(path, instructions, [catalog[g] for g in gold])),
        "perfect_search": play_search(conv, search, perfect, catalog, path),
        "real_search": play_search(conv, search, keyword_search(registry), catalog, path),
    }


_SEARCHES: dict[int, KeywordSearch] = {}


def keyword_search(registry: ToolRegistry) -> KeywordSearch:
    """One :class:`KeywordSearch` per registry (its index is built once)."""
    key = id(registry)
    if key not in _SEARCHES:
        _SEARCHES[key] = KeywordSearch(registry.allowed())
    return _SEARCHES[key]


def priced(sessions: Sequence[dict[str, Played]]) -> dict[str, Any]:
    """Totals per profile and approach over ``sessions``, and the ratios the bench reports."""
    out: dict[str, Any] = {}
    for profile in PROFILES:
        totals = {a: 0.0 for a in APPROACHES}
        for s in sessions:
            for a in APPROACHES:
                totals[a] += price_session(s[a].transcript.calls, profile).cost
        out[profile.name] = {"unit": profile.unit, "total": totals, **ratios(totals)}
    out["searches"] = {
        a: sum(s[a].searches for s in sessions) for a in ("perfect_search", "real_search")
    }
    out["search_misses"] = sum(s["real_search"].misses for s in sessions)
    out["calls"] = {a: sum(len(s[a].transcript.calls) for s in sessions) for a in APPROACHES}
    return out


def ratios(t: dict[str, float]) -> dict[str, float]:
    """The reported ratios of session-cost totals (sums over every session of the run)."""

    def r(a: str, b: str) -> float:
        return round(t[a] / t[b], 4) if t[b] else 0.0

    return {
        "tooltray/eager": r("tooltray", "eager"),
        "tooltray/oracle": r("tooltray", "oracle"),
        "oracle/eager": r("oracle", "eager"),
        "perfect_search/eager": r("perfect_search", "eager"),
        "real_search/eager": r("real_search", "eager"),
    }
