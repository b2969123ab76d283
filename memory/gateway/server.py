"""The MCP face of the gateway: a low-level ``mcp`` Server whose handlers ask the Gateway.

Sessions: over stdio one client owns the process and its session is ``--session``; over
streamable HTTP a client's session is the ``session`` query parameter of its URL when given
(``http://host:port/mcp?session=alice``, stable across gateway restarts), else its
``Mcp-Session-Id``. An ``initialize`` of a named session is a resume boundary. A new named
session may start from another's loaded set (a subagent's): ``--fork PARENT`` on stdio,
``?fork=PARENT`` on HTTP.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession

from tooltray.memory.gateway.gateway import Gateway

log = logging.getLogger("tooltray.gateway")
SESSION_PARAM = "session"
SESSION_HEADER = "mcp-session-id"
FORK_PARAM = "fork"
UNNAMED = "mcp-"  # the sessions keyed by a connection's Mcp-Session-Id: never a fork's parent


class SessionKeys:
    """Which tooltray session a request belongs to.

    Args:
        fixed: the stdio session id (``None`` on HTTP, where each request names its own).
        fork: the stdio session's parent (``--fork``), used only if the session is new.
    """

    def __init__(self, fixed: str | None, fork: str | None = None) -> None:
        self.fixed = fixed
        self.fork = fork

    def named(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        """A session named by the client or the command line (one that may be resumed)."""
        if self.fixed is not None:
            return self.fixed
        request = ctx.request
        params = getattr(request, "query_params", None)
        value = params.get(SESSION_PARAM) if params is not None else None
        return str(value) if value else None

    def parent(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        """The session a new named session starts from: ``--fork``, else ``?fork=``. Only a
        named session can be a parent, as a client could open it itself; another connection's
        unnamed session cannot."""
        if self.fixed is not None:
            return self.fork
        params = getattr(ctx.request, "query_params", None)
        value = params.get(FORK_PARAM) if params is not None else None
        if not value or str(value).startswith(UNNAMED):
            return None
        return str(value)

    def of(self, ctx: ServerRequestContext[Any, Any]) -> str:
        """The session of any request after ``initialize``."""
        named = self.named(ctx)
        if named is not None:
            return named
        headers = getattr(ctx.request, "headers", None)
        value = headers.get(SESSION_HEADER) if headers is not None else None
        return f"mcp-{value}" if value else "mcp-anonymous"


class _InitializeBoundary:
    """Middleware: after a successful ``initialize`` of a named session, start/resume it."""

    def __init__(self, gateway: Gateway, keys: SessionKeys) -> None:
        self.gateway, self.keys = gateway, keys

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "initialize":
            session = self.keys.named(ctx)
            if session is not None:
                await self._start(session, self.keys.parent(ctx))
        return result

    async def _start(self, session: str, parent: str | None) -> None:
        """Start (from ``parent``'s tools when new) or resume; a failure is logged and the
        session goes on (tools/list retries)."""
        try:
            if parent is not None:
                await self.gateway.fork(parent, session)
            loaded = await self.gateway.start(session)
        except Exception as exc:  # the client's handshake must not fail over tooltray's state
            log.error("tooltray gateway: could not start session %r: %s", session, exc)
            return
        log.info("tooltray gateway: session %r started with %d tools.", session, len(loaded))


def build_server(gateway: Gateway, keys: SessionKeys) -> Server[Any]:
    """The low-level MCP server answering ``tools/list`` and ``tools/call`` from ``gateway``."""

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        session = keys.of(ctx)
        tools = await gateway.list_tools(session)
        _listen(gateway, session, ctx.session)  # changes after this listing are news to it
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        session = keys.of(ctx)
        _listen(gateway, session, ctx.session)
        result, changed = await gateway.call(session, params.name, dict(params.arguments or {}))
        if changed:
            await ctx.session.send_notification(
                types.ToolListChangedNotification(), related_request_id=ctx.request_id
            )
        return result

    server: Server[Any] = Server(
        "tooltray-gateway",
        version="0.1.0",
        instructions=(
            "Tools not listed here can be found with load_tools (by name, server name or a "
            'query); load_tools with tools ["*"] lists every tool for one call.'
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.append(_InitializeBoundary(gateway, keys))
    return server


def _listen(gateway: Gateway, session: str, peer: ServerSession) -> None:
    """Remember how to tell this client its tools changed (an upstream came back, say)."""
    gateway.listeners[session] = peer.send_tool_list_changed


def init_options(server: Server[Any]) -> InitializationOptions:
    """Initialization options announcing ``tools.listChanged``."""
    return server.create_initialization_options(NotificationOptions(tools_changed=True))
