"""The demo's scripted model, made to play fair: it acts only on the prompt rendered for it.

A real model sees the system prefix (with the bundle menu) and the ``tools=`` list, nothing else
of the catalog. So this model calls a scripted tool only once that tool is offered; when it is
not, it does what the script says a model would write, ``load_tools`` with bundle names from the
menu or a query in the user's words, and only if that still does not offer the tool, every tool
(``load_tools(["*"])``, or ``fallback`` where the prompt shows it); when that answers with the
catalog's names instead (a catalog too large to list), it loads the tool by the name it read.
Every call it makes is checked against the view it was given (:func:`check_fair`), so a script
that names a hidden tool fails loudly instead of making the product look better than it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

LOAD_TOOLS = "load_tools"
FALLBACK = "fallback"
CALL_TOOL = "call_tool"
EVERY_TOOL = "*"
_MENU = re.compile(r"^Tool bundles for load_tools:\n((?:- [\w.-]+: .*\n?)+)", re.M)
_MENU_LINE = re.compile(r"^- ([\w.-]+): ", re.M)
_LISTED = re.compile(r"^- [^:\n]+: (.+)$", re.M)


class ToolLike(Protocol):
    """What the model reads of a tool offered in ``tools=``: its name."""

    @property
    def name(self) -> str: ...


class ViewLike(Protocol):
    """The part of a prompt view a model sees: the system prefix, the ``tools=`` specs and the
    tools revealed at the end of the context (their listing is in the messages it reads)."""

    @property
    def system_prefix(self) -> str: ...

    @property
    def specs(self) -> Sequence[ToolLike]: ...

    @property
    def revealed(self) -> Sequence[ToolLike]: ...


class UnfairCallError(ValueError):
    """The scripted model was about to name something its prompt never showed it."""


@dataclass(frozen=True)
class ModelCall:
    """One tool call the model makes: a meta-tool or a tool from ``tools=``."""

    name: str
    arguments: dict[str, Any]


def menu_bundles(prefix: str) -> set[str]:
    """Bundle names listed in the bundle menu of a system prefix (``- name: ...`` lines)."""
    menu = _MENU.search(prefix)
    return set(_MENU_LINE.findall(menu.group(1))) if menu else set()


def check_fair(view: ViewLike, call: ModelCall, heard: frozenset[str] = frozenset()) -> ModelCall:
    """Return ``call`` if its prompt (or an answer it read: ``heard``) showed everything it
    names, else raise UnfairCallError."""
    offered = {s.name for s in view.specs}
    if call.name not in offered:
        raise UnfairCallError(f"{call.name} is not in the tools= list the model was given")
    if call.name == CALL_TOOL and call.arguments.get("name") not in _shown(view):
        raise UnfairCallError(f"call_tool names {call.arguments.get('name')}, never shown")
    if call.name == LOAD_TOOLS:
        names = call.arguments.get("tools", [])
        bundles = menu_bundles(view.system_prefix) | {EVERY_TOOL}
        hidden = [n for n in names if n not in offered | bundles | heard]
        if hidden:
            raise UnfairCallError(f"load_tools names {hidden}, neither offered nor in the menu")
    return call


def _shown(view: ViewLike) -> set[str]:
    """Every tool the prompt shows: in ``tools=`` or revealed at the end of the context."""
    return {s.name for s in view.specs} | {s.name for s in view.revealed}


def _direct(view: ViewLike, name: str, arguments: dict[str, Any]) -> ModelCall:
    """A call to a shown tool: by name when it is in ``tools=``, else through the bridge."""
    if name in {s.name for s in view.specs}:
        return ModelCall(name, arguments)
    return ModelCall(CALL_TOOL, {"name": name, "arguments": arguments})


@dataclass
class ScriptedTurn:
    """One scripted turn played against the views the trinket hands out, call by call.

    Args:
        calls: the script's ``calls``: what a competent model would end up calling, each with an
            optional ``recover`` (the ``load_tools`` arguments it writes when the tool is absent).
    """

    calls: list[dict[str, Any]]
    recoveries: list[ModelCall] = field(default_factory=list)
    _tried: set[str] = field(default_factory=set)
    _fell_back: set[str] = field(default_factory=set)
    _heard: set[str] = field(default_factory=set)
    _named: set[str] = field(default_factory=set)

    @property
    def heard(self) -> frozenset[str]:
        """The tool names the model read in meta-tool answers so far."""
        return frozenset(self._heard)

    def hear(self, answer: str) -> None:
        """Read a meta-tool's answer: the tool names a names-only fallback lists by bundle."""
        for line in _LISTED.findall(answer):
            self._heard.update(n.strip() for n in line.split(","))

    def act(self, view: ViewLike) -> ModelCall | None:
        """The model's next call given the prompt ``view``, or ``None`` when the turn is done."""
        if not self.calls:
            return None
        step = self.calls[0]
        name = step["name"]
        if name in _shown(view):
            self.calls.pop(0)
            call = _direct(view, name, dict(step.get("arguments", {})))
            return check_fair(view, call, self.heard)
        return check_fair(view, self._recover(view, name, step.get("recover")), self.heard)

    def _recover(self, view: ViewLike, name: str, recover: dict[str, Any] | None) -> ModelCall:
        """Ask for the absent tool the way the script says, then fall back, then give up."""
        if recover and name not in self._tried:
            self._tried.add(name)
            call = ModelCall(LOAD_TOOLS, dict(recover))
        elif name not in self._fell_back:
            self._fell_back.add(name)
            call = self._every_tool(view)
        elif name in self._heard and name not in self._named:
            self._named.add(name)
            call = ModelCall(LOAD_TOOLS, {"tools": [name]})
        else:
            raise UnfairCallError(f"{name} is still not offered after load_tools and fallback")
        self.recoveries.append(call)
        return call

    @staticmethod
    def _every_tool(view: ViewLike) -> ModelCall:
        """The last resort the prompt offers: ``fallback`` where it is shown, else
        ``load_tools(["*"])`` as the ``load_tools`` description says."""
        if any(s.name == FALLBACK for s in view.specs):
            return ModelCall(FALLBACK, {"reason": "No offered tool can do this."})
        return ModelCall(LOAD_TOOLS, {"tools": [EVERY_TOOL]})
