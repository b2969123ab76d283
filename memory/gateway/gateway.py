"""The gateway's core: MCP sessions mapped onto trinket sessions, calls routed to upstreams.

What one client sees (``tools/list``) is the trinket's view of its session: the meta-tools, then
the loaded tools (CORE, pinned, what the model loaded or called) in the order tooltray keeps.
Every call of an allowed tool runs, listed or not; a call of an unlisted one is reported as
``tool-used`` and the trinket loads it as an escape.

With ``reveal: "bridge"`` (the config's ``tooltray`` object, or ``--reveal bridge``) a session's
``tools/list`` is taken once per boundary (``initialize``, or an upstream whose tools changed)
and answered the same until the next one: the meta-tools the trinket shows when appending
(``load_tools``, whose ``["*"]`` is the fallback, and ``call_tool``) and the tools chosen then.
A tool loaded later is listed in the ``load_tools`` answer (the trinket's reveal-by-append) and
reached through ``call_tool``, which goes down the same route as a direct call (allow-list,
upstream, ``read_result``) after its arguments are checked against the tool's real schema; no
``list_changed`` is sent for a load, so the client's prompt prefix (and its cache) survives.

A turn: MCP carries no user messages, so the gateway counts one turn per forwarded call of an
upstream tool (``turn-completed`` after each). A ``fallback`` therefore lasts until the model's
next real call, tools "idle" for ``idle_turns`` are those not called in that many calls, and the
``turns`` table records one row per call. A client that passes the user's text (``hints.py``)
opens a turn with it, and the trinket selects on it as on a chat message. After each forwarded
call the trinket's ``follow`` appends what the call points to next (the tool's learned
companions, its own text as evidence): listed before the client's next call (``list_changed``
with the answer) or, bridged, named in a note after the result.

All trinket and registry work runs in one worker thread at a time (the trinket is synchronous
and touches the database), so the event loop keeps serving while the store writes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from mcp import types

from tooltray.events import emit, tool_used, turn_completed
from tooltray.events.payloads import ToolUsed, TurnCompleted
from tooltray.memory.agent.calls import argument_problem
from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.gateway.catalog import GatewayCatalog, Route
from tooltray.memory.gateway.config import GatewayConfig, GatewayConfigError
from tooltray.memory.gateway.hints import Conversations
from tooltray.memory.gateway.pins import ToolPins
from tooltray.memory.gateway.policy import GatewayPolicy
from tooltray.memory.gateway.state import GatewayState
from tooltray.memory.gateway.upstream import Upstream, UpstreamError
from tooltray.memory.metatools.meta_tools import (
    CALL_TOOL,
    LOAD_TOOLS,
    MAX_ITEM_CHARS,
    parse_bridge,
)
from tooltray.tools.errors import MetaToolArgumentError, SessionForkError, TooltrayError
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import count_tokens
from tooltray.tools.spec import Decoded, ToolSpec, decode_arguments

log = logging.getLogger("tooltray.gateway")
T = TypeVar("T")
MAX_ARGUMENT_CHARS = 500_000  # one call's arguments as JSON
Listener = Callable[[], Any]


def error_result(text: str) -> types.CallToolResult:
    """A tool result the model reads as an error."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def text_result(text: str) -> types.CallToolResult:
    """A plain text tool result."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def with_note(result: types.CallToolResult, note: str) -> types.CallToolResult:
    """``result`` with ``note`` (tools revealed after it) as one more text block."""
    if not note.strip():
        return result
    content = [*result.content, types.TextContent(type="text", text=note.strip())]
    return result.model_copy(update={"content": content})


def oversized(name: str, arguments: dict[str, Any]) -> str | None:
    """Why a call is refused before any work: a name or arguments past the bounds, else None
    (a 10 MB name would go through did-you-mean matching; huge arguments through schemas)."""
    if len(name) > MAX_ITEM_CHARS:
        return f"Error: a tool name of {len(name)} characters; names have at most 64."
    try:
        size = len(json.dumps(arguments, default=str))
    except (RecursionError, ValueError):
        return "Error: the arguments are nested too deeply to read; send a flat JSON object."
    if size > MAX_ARGUMENT_CHARS:
        return (
            f"Error: {size} characters of arguments; the gateway takes at most "
            f"{MAX_ARGUMENT_CHARS} per call: pass large content by reference (a path or URL)."
        )
    return None


class Gateway:
    """Upstream servers behind one trinket.

    Args:
        config: the upstream servers and naming rule.
        settings: tooltray settings (store URL, caps, allow/deny); the gateway turns off the
            load-everything-while-it-fits shortcut, since there is no user text to start from,
            and takes ``reveal`` from the config (``bridge`` appends, ``list`` grows the prefix);
            ``generic`` is ``detect`` unless set (tasks over many servers need a filesystem, a
            shell, fetch without naming them).
        state: the gateway's state file (tool fingerprints, session owners).
        upstream_options: keyword arguments for each :class:`Upstream` (timeouts, backoff).
    """

    def __init__(
        self,
        config: GatewayConfig,
        settings: Settings | None = None,
        state: GatewayState | None = None,
        **upstream_options: float,
    ) -> None:
        reveal = "append" if config.reveal == "bridge" else "prefix"
        settings = settings or Settings()
        self.policy = GatewayPolicy(
            None if settings.allow is None else tuple(settings.allow), tuple(settings.deny)
        )
        fixed = {"activation_share": 0.0, "opening": "share", "reveal": reveal}
        if "generic" not in settings.model_fields_set:  # many servers: generic ones go unnamed
            fixed["generic"] = "detect"
        # allow/deny reach the registry as shown names, resolved by the catalog (policy.py)
        settings = settings.model_copy(update={**fixed, "allow": None, "deny": []})
        self.config = config
        self.state = state or GatewayState(None)
        self.registry = ToolRegistry()
        self.pins = ToolPins(self.state, settings.accept_changed_tools)
        self.catalog = GatewayCatalog(config, self.registry, self.policy, self.pins)
        self.trinket = ToolLoaderTrinket(self.registry, settings=settings, shows_menu=False)
        self.upstreams = {
            s.name: Upstream(s, self._listed, **upstream_options) for s in config.servers
        }
        self.ready_timeout = float(upstream_options.get("start_timeout", 30.0))
        self.listeners: dict[str, Listener] = {}
        self._limiter = anyio.CapacityLimiter(1)
        self._turns: dict[str, int] = {}
        self._listings: dict[str, list[types.Tool]] = {}
        self._said = Conversations()

    @property
    def bridged(self) -> bool:
        """Whether ``tools/list`` stays fixed between boundaries (``reveal: "bridge"``)."""
        return self.config.reveal == "bridge"

    async def core(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the trinket's worker (one at a time, never cancelled midway)."""
        return await anyio.to_thread.run_sync(fn, *args, limiter=self._limiter)

    async def run(self) -> None:
        """Run every upstream until cancelled; meanwhile load the token encoder.

        The encoder takes seconds to load and the first ``tools/list`` needs it; loading it
        while the upstream processes start overlaps the two waits.
        """
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.core, count_tokens, "warm up")
            for upstream in self.upstreams.values():
                tg.start_soon(upstream.run)

    async def wait_ready(self) -> None:
        """Wait until every upstream's first start attempt ended (at most the start timeout)."""
        with anyio.move_on_after(self.ready_timeout):
            for upstream in self.upstreams.values():
                await upstream.settled.wait()

    async def policy_problem(self) -> GatewayConfigError | None:
        """Why the allow/deny lists cannot be used, once every upstream listed its tools.

        An entry naming no tool is refused (a typo would deny nothing). While a server is
        down its tools are unknown, so then the problem is only logged.
        """
        if self.policy.allow is None and not self.policy.deny:
            return None
        await self.wait_ready()
        try:
            self.policy.check(self.catalog.listed_routes())
        except GatewayConfigError as exc:
            if all(u.up for u in self.upstreams.values()):
                return exc
            log.warning("tooltray gateway: %s (a server is down: checked again later)", exc)
        return None

    async def release(self, session_id: str) -> None:
        """Forget a session whose client closed it (its stored state stays for a resume)."""
        self._turns.pop(session_id, None)
        self._listings.pop(session_id, None)
        self.listeners.pop(session_id, None)
        self._said.forget(session_id)
        await self.core(self.trinket.release, session_id)

    def close(self) -> None:
        """Store what is deferred and detach the trinket from the signals."""
        self.trinket.close()

    async def _listed(self, upstream: Upstream) -> None:
        changed = await self.core(self.catalog.update, upstream.name, list(upstream.tools))
        if changed:
            self._listings.clear()  # the catalog changed: each session's next listing is new
            for notify in list(self.listeners.values()):
                try:
                    await notify()
                except Exception as exc:  # a gone client must not stop the upstream
                    log.debug("tooltray gateway: list_changed not delivered: %s", exc)

    # ----- sessions --------------------------------------------------------------------------

    async def start(self, session_id: str) -> list[str]:
        """A resume boundary (MCP ``initialize``): start or resume; idle tools are evicted.

        It does not wait for the upstreams (``initialize`` must answer promptly): tools of a
        server still starting are listed once it has listed them.
        """
        view = await self.core(self.trinket.start, session_id, ())
        self._turns[session_id] = view.turn
        self._listings.pop(session_id, None)
        return list(view.loaded)

    async def fork(self, parent: str, child: str) -> list[str]:
        """Start the new session ``child`` from ``parent``'s loaded set; a ``child`` that exists
        already is left as it is (a reconnecting subagent resumes), a missing parent is logged
        and the child starts on its own."""
        if await self.core(self.trinket.store.snapshot, child) is not None:
            return []
        try:
            return await self.core(self.trinket.fork, parent, child)
        except SessionForkError as exc:
            log.warning("tooltray gateway: session %r starts on its own: %s", child, exc)
            return []

    async def list_tools(self, session_id: str) -> list[types.Tool]:
        """The session's ``tools/list``: meta-tools, then loaded tools, in the kept order.

        Bridged, the first listing after a boundary is kept and answered until the next one
        (``prepare`` is not asked again: without user text every call of it is a first
        selection, which would make everything loaded since part of the listing).
        """
        await self.wait_ready()
        kept = self._listings.get(session_id)
        if kept is not None:
            return list(kept)
        view = await self.core(self.trinket.prepare, session_id, ())
        self._turns[session_id] = view.turn
        tools = [self._definition(s) for s in view.specs]
        if self.bridged:
            self._listings[session_id] = tools
        return list(tools)

    async def hint(self, session_id: str, text: str) -> bool:
        """The user's ``text`` for the session (``hints.py``): a new turn whose selection runs
        as ``prepare`` would run it with that message; True when the loaded set changed.

        Its picks are listed at once, bridged or not (the listing kept since the boundary is
        dropped): a user message opens a turn, where a new prefix costs least.
        """
        if self._said.repeats(session_id, text):
            return False
        await self.wait_ready()
        if session_id not in self._turns:
            await self.list_tools(session_id)
        before = await self.core(self.trinket.loaded, session_id)
        log.info("tooltray gateway: session %r: user text (%d chars)", session_id, len(text))
        messages = self._said.add(session_id, self._turns[session_id] + 1, text)
        view = await self.core(self.trinket.prepare, session_id, messages)
        self._turns[session_id] = view.turn
        if list(view.loaded) == before:
            return False
        self._listings.pop(session_id, None)
        return True

    async def hint_from_outside(self, session_id: str, text: str) -> list[str]:
        """A hint that came apart from the session's requests (``hint_route.py``): selected on
        as :meth:`hint`, and the session's client, if connected, told its tools changed.
        Returns the tools it loaded (a failure is logged and loads none)."""
        try:
            before = set(await self.core(self.trinket.loaded, session_id))
            if not await self.hint(session_id, text):
                return []
        except Exception as exc:  # a hint is advice: log it, answer that nothing was revealed
            log.warning("tooltray gateway: hint for session %r not used: %s", session_id, exc)
            return []
        notify = self.listeners.get(session_id)
        if notify is not None:
            try:
                await notify()
            except Exception as exc:  # a gone client must not fail the hint
                log.debug("tooltray gateway: list_changed not delivered: %s", exc)
        loaded = await self.core(self.trinket.loaded, session_id)
        return [n for n in loaded if n not in before]

    def _definition(self, spec: ToolSpec) -> types.Tool:
        upstream = self.catalog.definition(spec.name)
        if upstream is not None:
            return upstream
        return types.Tool(
            name=spec.name, description=spec.description, input_schema=spec.parameters
        )

    # ----- calls -----------------------------------------------------------------------------

    async def call(
        self, session_id: str, name: str, arguments: dict[str, Any]
    ) -> tuple[types.CallToolResult, bool]:
        """Run one ``tools/call``; returns the result and whether the session's listing changed
        (never when bridged: what loads is revealed in the answers, not in ``tools/list``)."""
        too_big = oversized(name, arguments)
        if too_big is not None:
            await self.core(self.trinket.refuse, session_id, name[:MAX_ITEM_CHARS], too_big)
            return error_result(too_big), False
        await self.wait_ready()
        if session_id not in self._turns:
            await self.list_tools(session_id)
        before = await self.core(self.trinket.loaded, session_id)
        result = await self._dispatch(session_id, name, arguments)
        after = await self.core(self.trinket.loaded, session_id)
        seeded = await self._seed(session_id, name, arguments)
        return result, seeded or (after != before and not self.bridged)

    async def _seed(self, session_id: str, name: str, arguments: dict[str, Any]) -> bool:
        """A session's first ``load_tools`` query, before any text reached it, is its user's
        words as far as the gateway can tell: selection runs on it as on a hint."""
        query = arguments.get("query") if name == LOAD_TOOLS else None
        if not isinstance(query, str) or not query.strip() or self._said.has_text(session_id):
            return False
        try:
            return await self.hint(session_id, query)
        except Exception as exc:  # the search already answered: its result must reach the client
            log.warning(
                "tooltray gateway: session %r: selection on the query failed: %s", session_id, exc
            )
            return False

    async def _dispatch(
        self, session_id: str, name: str, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        """A meta-tool, the bridge (when bridged) or an upstream tool."""
        if self.bridged and name == CALL_TOOL:
            return await self._bridge(session_id, arguments)
        if self.trinket.is_meta(name):
            text, refused = await self.core(self.trinket.run_meta, session_id, name, arguments)
            return error_result(text) if refused else text_result(text)
        return await self._forward(session_id, name, arguments)

    async def _bridge(self, session_id: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """``call_tool``: the named tool runs as if called directly, once its arguments fit its
        schema (the client checked them against ``call_tool``'s free-form one only)."""
        try:
            name, raw = parse_bridge(arguments)
        except MetaToolArgumentError as exc:
            await self.core(self.trinket.refuse, session_id, CALL_TOOL, str(exc))
            return error_result(f"Error: {exc}")
        decoded = decode_arguments(raw)
        bad = await self.core(self._problem, name, decoded)
        if bad is not None:
            return error_result(bad)
        return await self._dispatch(session_id, name, decoded.value)

    def _problem(self, name: str, decoded: Decoded) -> str | None:
        """The error text for arguments the allowed upstream tool ``name`` cannot take, if any
        (meta-tools check their own; a tool that is not allowed is refused on its route)."""
        found = self._lookup(name)
        spec = self.trinket.registry.get(found[1]) if found is not None else None
        if spec is not None:
            return argument_problem(spec, decoded)
        return f"Error: bad arguments for {name}: {decoded.problem}" if decoded.problem else None

    async def _forward(
        self, session_id: str, name: str, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        found = await self.core(self._lookup, name)
        if found is None:
            return await self._refuse(session_id, name)
        route, listed = found
        try:
            result = await self.upstreams[route.server].call(route.tool, arguments)
        except UpstreamError as exc:
            return error_result(str(exc))
        await self.core(self._used, session_id, listed, not result.is_error)
        note = await self._follow(session_id, listed)
        return with_note(await self._shorten(session_id, listed, result), note)

    async def _follow(self, session_id: str, tool: str) -> str:
        """Load what the call of ``tool`` points to next (``ToolLoaderTrinket.follow``): listed
        before the client's next call, or (bridged) named in the returned note. A failure is
        a WARNING: the call already ran, its result must reach the client."""
        try:
            names, note = await self.core(self.trinket.follow, session_id, [tool])
        except Exception as exc:
            log.warning("tooltray gateway: %r: no follow-up of %s: %s", session_id, tool, exc)
            return ""
        return note if names and self.bridged else ""

    def _lookup(self, name: str) -> tuple[Route, str] | None:
        """The route and listed name of the allowed tool ``name`` (prefixed spellings too)."""
        route = self.catalog.route(name)
        if route is None or not self.trinket.registry.is_allowed(name):
            return None
        return route, self.trinket.registry.resolve(name).name

    async def _refuse(self, session_id: str, name: str) -> types.CallToolResult:
        try:
            self.trinket.registry.resolve(name)
            reason = f"Tool {name!r} is not served by any running MCP server."
        except TooltrayError as exc:
            reason = self.pins.refusal(name, self.config.exposed_name) or str(exc)
        await self.core(self.trinket.refuse, session_id, name, reason)
        return error_result(reason)

    def _used(self, session_id: str, tool: str, ok: bool) -> None:
        """Report the use (an unlisted tool becomes an escape), then close the turn."""
        turn = self._turns.get(session_id, 0)
        emit(tool_used, session_id, ToolUsed(tool=tool, turn=turn, ok=ok))
        self._turns[session_id] = turn + 1
        emit(turn_completed, session_id, TurnCompleted(turn=turn + 1))

    async def _shorten(
        self, session_id: str, tool: str, result: types.CallToolResult
    ) -> types.CallToolResult:
        """Put a long all-text result behind ``read_result`` (other content passes as is)."""
        blocks = result.content
        if not blocks or not all(isinstance(b, types.TextContent) for b in blocks):
            return result
        text = "\n".join(b.text for b in blocks if isinstance(b, types.TextContent))
        short = await self.core(self.trinket.shorten, session_id, tool, text)
        if short == text:
            return result
        content: list[types.ContentBlock] = [types.TextContent(type="text", text=short)]
        return result.model_copy(update={"content": content})
