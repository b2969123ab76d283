"""Allow-lists: a tool outside the allow-list is never shown, loaded or run; refusals are kept.

Every route a tool can take into a session is tried for each forbidden tool, with a message that
would pick it: initial selection, growth, skills, ``load_tools`` by name, prefixed alias, bundle
and query, ``fallback``, auto-load on an unlisted call, the all-tools modes, and a deny added
mid-session. The prompt (``tools=``, the system prefix, the text block), the loaded set, the
store and the executors are all checked; explicit requests must leave a ``refused`` history row.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed
from tooltray.memory.agent.calls import REFUSED, CallRunner
from tooltray.memory.config import Settings
from tooltray.memory.core.prompt import PromptView
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.store import Store
from tooltray.tools.demo import demo_registry, demo_skills_dir
from tooltray.tools.errors import EmbedderError
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec

ATTACKS = {
    "git_push": "Great, commit that and push it to my branch.",
    "travel_book_hotel": "Hotel Miradouro looks good. Book the hotel room in my name.",
    "shopping_checkout": "Check out my shopping cart and pay for the order now.",
    "email_send": "Send an email to Dana saying I'll be away next week.",
    "tripwire": "Trip the wire: run the tripwire tool right now.",
}
FORBIDDEN = tuple(ATTACKS)
EXPOSING = {"loaded", "used", "escape", "fallback"}
Make = Callable[..., ToolLoaderTrinket]


def registry_for(kind: str, calls: list[dict[str, Any]]) -> ToolRegistry:
    """The demo catalog plus a ``tripwire`` tool, with FORBIDDEN denied or left off the allow."""
    registry = demo_registry()
    spec = ToolSpec(
        name="tripwire", description="Trip the wire: records that it ran.", bundle="git"
    )
    registry.register(spec, lambda **kw: calls.append(kw) or "ran")
    if kind == "deny":
        registry.deny = FORBIDDEN
    else:
        registry.allow = [s.name for s in registry.all_tools() if s.name not in FORBIDDEN]
    return registry


@pytest.fixture
def make(seeded_sqlite: str) -> Iterator[Make]:
    made: list[ToolLoaderTrinket] = []

    def build(registry: ToolRegistry, **settings: Any) -> ToolLoaderTrinket:
        settings.setdefault("skills_dir", demo_skills_dir())
        trinket = ToolLoaderTrinket(
            registry, Store(seeded_sqlite), settings=Settings(db=seeded_sqlite, **settings)
        )
        made.append(trinket)
        return trinket

    yield build
    for trinket in made:
        trinket.close()


def leaks(view: PromptView) -> list[str]:
    """Forbidden names anywhere in what the model would be shown."""
    shown = json.dumps(view.tools()) + view.system_prefix
    names = {s.name for s in view.specs} | {s.name for s in view.text_specs} | set(view.loaded)
    return [f for f in FORBIDDEN if f in names or re.search(rf"(?<![\w.-]){f}(?![\w.-])", shown)]


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


class Attempts:
    """Counts of what was tried, and anything that got through."""

    def __init__(self) -> None:
        self.by_route: dict[str, int] = {}
        self.leaked: list[str] = []

    def check(self, route: str, view: PromptView | None, loaded: list[str]) -> None:
        self.by_route[route] = self.by_route.get(route, 0) + 1
        got = (leaks(view) if view is not None else []) + [n for n in loaded if n in FORBIDDEN]
        self.leaked += [f"{route}: {name}" for name in got]


def attack_session(trinket: ToolLoaderTrinket, sid: str, forbidden: str, tally: Attempts) -> None:
    message = ATTACKS[forbidden]
    runner = CallRunner(trinket, native=trinket.settings.path != "text")
    view = trinket.prepare(sid, [user(message)])
    tally.check("initial selection + skills", view, trinket.loaded(sid))
    bundle = trinket.registry.all_tools()
    group = next(s.bundle for s in bundle if s.name == forbidden)
    names = [forbidden, f"mcp__demo__{forbidden}", forbidden.upper(), str(group)]
    reply = trinket.handle_meta(sid, "load_tools", {"tools": names})
    assert "Refused" in reply and forbidden in reply
    tally.check(
        "load_tools names/alias/bundle", trinket.prepare(sid, [user(message)]), trinket.loaded(sid)
    )
    trinket.handle_meta(sid, "load_tools", {"query": message})
    tally.check("load_tools query", trinket.prepare(sid, [user(message)]), trinket.loaded(sid))
    trinket.handle_meta(sid, "fallback", {"reason": "need it"})
    tally.check("fallback", trinket.prepare(sid, [user(message)]), trinket.loaded(sid))
    for name in (forbidden, f"mcp__demo__{forbidden}"):
        call = runner.run(sid, 1, 0, name, "{}")
        assert call.status == REFUSED and call.tool is None, call
        tally.check("execute", None, trinket.loaded(sid))
    emit(turn_completed, sid, TurnCompleted(turn=1))
    follow = [user(message), {"role": "assistant", "content": "ok"}, user(message)]
    tally.check("growth", trinket.prepare(sid, follow), trinket.loaded(sid))
    tally.check("boundary resume", trinket.start(sid, follow), trinket.loaded(sid))


@pytest.mark.parametrize("kind", ["deny", "allow"])
@pytest.mark.parametrize("path", ["openai", "text"])
def test_forbidden_tools_never_reach_the_model_the_loaded_set_or_an_executor(
    make: Make, kind: str, path: str, figures: dict[str, Any]
) -> None:
    calls: list[dict[str, Any]] = []
    registry = registry_for(kind, calls)
    trinket = make(registry, path=path)
    tally = Attempts()
    for forbidden in FORBIDDEN:
        attack_session(trinket, f"{kind}-{path}-{forbidden}", forbidden, tally)
    for label, settings in (
        ("all mode", {"context_window": 400_000}),
        ("loader off", {"enabled": False}),
    ):
        other = make(registry, path=path, **settings)
        view = other.prepare(f"{kind}-{label}", [user(ATTACKS["git_push"])])
        tally.check(label, view, other.loaded(f"{kind}-{label}"))
    broken = make(registry, path=path)

    def down(*_: Any, **__: Any) -> Any:
        raise EmbedderError("embedder down for the test")

    broken.catalog.selector = down  # type: ignore[method-assign]
    view = broken.prepare(f"{kind}-degraded", [user(ATTACKS["email_send"])])
    assert view.mode == "degraded"
    tally.check("degraded", view, broken.loaded(f"{kind}-degraded"))
    assert calls == [], "a forbidden tool's executor ran"
    assert not tally.leaked, tally.leaked
    refused = check_store(trinket.store, [f"{kind}-{path}-{f}" for f in FORBIDDEN])
    figures[f"allowlist_{kind}_{path}"] = {
        "forbidden_tools": len(FORBIDDEN),
        "attempts": sum(tally.by_route.values()),
        "routes": sorted(tally.by_route),
        "refusals_recorded": refused,
        "leaked": len(tally.leaked),
        "executed": len(calls),
    }


def check_store(store: Store | None, sessions: list[str]) -> int:
    """No stored row exposes a forbidden tool; each explicit request left a refusal."""
    assert store is not None
    refused = 0
    for sid, forbidden in zip(sessions, FORBIDDEN, strict=True):
        snap = store.snapshot(sid)
        assert snap is not None and not set(snap.names()) & set(FORBIDDEN)
        history = store.history(sid)
        exposed = [(e.kind, e.tool) for e in history if e.kind in EXPOSING and e.tool in FORBIDDEN]
        assert not exposed, exposed
        rows = [e for e in history if e.kind == "refused" and e.tool is not None]
        tools = {e.tool for e in rows}
        # load_tools by name and alias, and the two refused calls
        assert {forbidden, f"mcp__demo__{forbidden}"} <= tools, (forbidden, tools)
        refused += len(rows)
    return refused


def test_deny_added_mid_session_hides_and_refuses_a_loaded_tool(make: Make) -> None:
    calls: list[dict[str, Any]] = []
    registry = registry_for("deny", calls)
    registry.deny = ()
    trinket = make(registry)
    trinket.prepare("mid", [user(ATTACKS["tripwire"])])
    trinket.handle_meta("mid", "load_tools", {"tools": ["tripwire"]})
    assert "tripwire" in trinket.prepare("mid", [user(ATTACKS["tripwire"])]).loaded
    registry.deny = FORBIDDEN
    view = trinket.prepare("mid", [user(ATTACKS["tripwire"])])
    assert not leaks(view)
    call = CallRunner(trinket, native=True).run("mid", 1, 0, "tripwire", "{}")
    assert call.status == REFUSED and calls == []
    store = trinket.store
    assert store is not None
    assert any(e.kind == "refused" and e.tool == "tripwire" for e in store.history("mid"))


def test_a_reported_use_of_a_forbidden_tool_is_recorded_as_refused_not_as_used(
    make: Make,
) -> None:
    """An agent that reports (``tool-used``) a call to a forbidden tool must not get it stored
    as a use; the attempt itself is a refusal worth recording."""
    calls: list[dict[str, Any]] = []
    trinket = make(registry_for("deny", calls))
    trinket.prepare("report", [user("hello")])
    emit(tool_used, "report", ToolUsed(tool="git_push", turn=1))
    emit(turn_completed, "report", TurnCompleted(turn=1))
    store = trinket.store
    assert store is not None
    kinds = [(e.kind, e.tool) for e in store.history("report") if e.tool == "git_push"]
    assert ("used", "git_push") not in kinds, kinds
    assert ("refused", "git_push") in kinds, kinds
    assert "git_push" not in trinket.loaded("report")


def test_settings_allow_and_deny_are_enforced(make: Make) -> None:
    """``Settings(deny=...)`` (``TOOLTRAY_DENY``, ``tooltray.toml``) documents "names never
    exposed or run": a tool denied there must be neither rendered nor executed."""
    trinket = make(demo_registry(), deny=["git_push"], allow=None)
    view = trinket.prepare("cfg", [user(ATTACKS["git_push"])])
    assert "git_push" not in leaks_any(view, "git_push")
    call = CallRunner(trinket, native=True).run("cfg", 1, 0, "git_push", "{}")
    assert call.status == REFUSED, call.result
    only = make(demo_registry(), allow=["web_search", "math_evaluate"])
    assert {s.name for s in only.prepare("cfg2", [user("hi")]).specs} <= {
        "web_search",
        "math_evaluate",
        "load_tools",
        "unload_tools",
        "fallback",
        "read_result",
    }


def leaks_any(view: PromptView, name: str) -> list[str]:
    shown = json.dumps(view.tools()) + view.system_prefix
    return [name] if name in set(view.loaded) or name in shown else []
