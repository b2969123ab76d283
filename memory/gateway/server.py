"""The MCP face of the gateway: a low-level ``mcp`` Server whose handlers ask the Gateway.

Sessions: over stdio one client owns the process and its session is ``--session``; over
streamable HTTP a client's session is the ``session`` query parameter of its URL when given
(``http://host:port/mcp?session=alice``, stable across gateway restarts, bound to the token
that opened it), else one per ``Mcp-Session-Id`` (kept as a hash). An ``initialize`` of a named
session is a resume boundary. A new named session may start from another's loaded set (a
subagent's): ``--fork PARENT`` on stdio, ``?fork=PARENT`` on HTTP (a session the client may open).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_REQUEST

from tooltray.memory.gateway.gateway import Gateway
from tooltray.memory.gateway.hints import hint_of
from tooltray.memory.gateway.state import GatewayState
from tooltray.tools.errors import SessionAccessError, shown
from tooltray.tools.spec import NAME_PATTERN

log = logging.getLogger("tooltray.gateway")
SESSION_PARAM = "session"
SESSION_HEADER = "mcp-session-id"
RESERVED = "mcp-"  # the sessions keyed by a connection's Mcp-Session-Id: never a fork's parent
MAX_SESSION_NAME = 64
FORK_PARAM = "fork"
T = TypeVar("T")


class SessionKeys:
    """Which tooltray session a request belongs to, and whether its client may open it.

    An unnamed HTTP session is ``mcp-`` and a hash of its ``Mcp-Session-Id`` (the id itself,
    a bearer secret, is never stored), and the ``mcp-`` prefix is the gateway's own: a client
    cannot name it in ``?session=``. A named session is bound to the credential (bearer token)
    that first opened it; another credential is refused. Without tokens (loopback) every
    client is the same user and names are shared.

    Args:
        fixed: the stdio session id (``None`` on HTTP, where each request names its own).
        state: where session owners persist (``None``: this process only).
        fork: the stdio session's parent (``--fork``), used only if the session is new.
    """

    def __init__(
        self, fixed: str | None, state: GatewayState | None = None, fork: str | None = None
    ) -> None:
        self.fixed = fixed
        self.fork = fork
        self.state = state or GatewayState(None)
        self._by_connection: dict[str, set[str]] = {}

    def named(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        """A session named by the client or the command line (one that may be resumed).

        Raises:
            SessionAccessError: a name that is malformed, reserved or another client's.
        """
        if self.fixed is not None:
            return self.fixed
        params = getattr(ctx.request, "query_params", None)
        value = params.get(SESSION_PARAM) if params is not None else None
        if not value:
            return None
        name = check_session_name(str(value))
        self.bind(name, credential(ctx))
        return name

    def parent(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        """The session a new named session starts from: ``--fork``, else ``?fork=``. Only a
        session the client could open itself can be a parent: a named one it may open, never
        another connection's unnamed one.

        Raises:
            SessionAccessError: a malformed or reserved name, or another credential's session.
        """
        if self.fixed is not None:
            return self.fork
        params = getattr(ctx.request, "query_params", None)
        value = params.get(FORK_PARAM) if params is not None else None
        if not value:
            return None
        name = check_session_name(str(value))  # never an unnamed (mcp-) session
        owner = self.state.owners.get(name)
        if owner is not None and owner != credential(ctx):
            raise SessionAccessError(
                f"?fork={name!r} is another client credential's session; fork one of your own."
            )
        return name

    def of(self, ctx: ServerRequestContext[Any, Any]) -> str:
        """The session of any request after ``initialize``, noted against its connection."""
        session = self.named(ctx) or self._unnamed(ctx)
        if self.fixed is None:
            self._by_connection.setdefault(connection(ctx), set()).add(session)
        return session

    def note(self, raw_id: str, session: str) -> None:
        """Note ``session`` against the connection ``raw_id`` (its ``initialize``, whose
        request carries no ``Mcp-Session-Id`` yet)."""
        if self.fixed is None:
            self._by_connection.setdefault(hashed(raw_id), set()).add(session)

    def closed(self, raw_id: str) -> list[str]:
        """The sessions the closed connection ``raw_id`` held that no open one holds."""
        held = self._by_connection.pop(hashed(raw_id), set())
        for other in self._by_connection.values():
            held -= other
        return sorted(held)

    def _unnamed(self, ctx: ServerRequestContext[Any, Any]) -> str:
        return f"mcp-{connection(ctx)}"

    def bind(self, name: str, who: str | None) -> None:
        """Bind an unowned ``name`` to the credential ``who``; refuse another's.

        Raises:
            SessionAccessError: ``name`` belongs to another credential.
        """
        owner = self.state.owners.get(name)
        if owner is None and who is not None:
            self.state.put("owners", name, who)
            self.state.save()
        elif owner is not None and owner != who:
            raise SessionAccessError(
                f"session {name!r} belongs to another client credential; name a session "
                "of your own in ?session=."
            )


def hashed(raw_id: str) -> str:
    """The stored form of an ``Mcp-Session-Id``."""
    return hashlib.sha256(raw_id.encode()).hexdigest()[:32]


def connection(ctx: ServerRequestContext[Any, Any]) -> str:
    """The hashed ``Mcp-Session-Id`` of a request (``anonymous`` without one)."""
    headers = getattr(ctx.request, "headers", None)
    value = headers.get(SESSION_HEADER) if headers is not None else None
    return hashed(str(value)) if value else "anonymous"


def credential(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The id of the bearer token the request carried (``None`` when tokens are off)."""
    return scope_credential(getattr(ctx.request, "scope", None))


def scope_credential(scope: Any) -> str | None:
    """The bearer token id of an ASGI scope the SDK's auth middleware saw (else ``None``)."""
    user = scope.get("user") if isinstance(scope, dict) else None
    token = getattr(user, "access_token", None)
    client_id = getattr(token, "client_id", None)
    return str(client_id) if client_id else None


def check_session_name(name: str) -> str:
    """A client's session name: 1-64 of ``[a-zA-Z0-9_.-]``, not the gateway's ``mcp-``.

    Raises:
        SessionAccessError: the name breaks either rule.
    """
    if len(name) > MAX_SESSION_NAME or not NAME_PATTERN.fullmatch(name):
        raise SessionAccessError(
            f"?session= takes 1-{MAX_SESSION_NAME} characters from [a-zA-Z0-9_.-], got "
            f"{shown(name)}."
        )
    if name.startswith(RESERVED):
        raise SessionAccessError(
            f"?session={shown(name)}: names starting with {RESERVED!r} are the gateway's own "
            "(one per connection); choose another name."
        )
    return name


class _InitializeBoundary:
    """Middleware: after a successful ``initialize`` of a named session, start/resume it."""

    def __init__(self, gateway: Gateway, keys: SessionKeys) -> None:
        self.gateway, self.keys = gateway, keys

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method != "initialize":
            return await call_next(ctx)
        session = _checked(self.keys.named, ctx)  # refused before the handshake answers
        parent = _checked(self.keys.parent, ctx) if session is not None else None
        result = await call_next(ctx)
        if session is not None:
            raw = release_on_end(self.gateway, self.keys, ctx)
            if raw is not None:
                self.keys.note(raw, session)
            await self._start(session, parent)
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
        session = _checked(keys.of, ctx)
        release_on_end(gateway, keys, ctx)
        await _hinted(gateway, session, ctx)  # listed below: no list_changed needed
        tools = await gateway.list_tools(session)
        _listen(gateway, session, ctx.session)  # changes after this listing are news to it
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        session = _checked(keys.of, ctx)
        release_on_end(gateway, keys, ctx)
        _listen(gateway, session, ctx.session)
        hinted = await _hinted(gateway, session, ctx)
        result, changed = await gateway.call(session, params.name, dict(params.arguments or {}))
        if changed or hinted:
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


def _checked(read: Callable[[ServerRequestContext[Any, Any]], T], ctx: Any) -> T:
    """``read(ctx)``, a refused session answered as a JSON-RPC error the client shows."""
    try:
        return read(ctx)
    except SessionAccessError as exc:
        log.warning("tooltray gateway: refused a request: %s", exc)
        raise MCPError(INVALID_REQUEST, str(exc)) from None


WATCHED = "tooltray.release_on_end"


def release_on_end(
    gateway: Gateway, keys: SessionKeys, ctx: ServerRequestContext[Any, Any]
) -> str | None:
    """However the SDK ends this HTTP connection (``DELETE``, its idle timeout, a crash), the
    gateway then forgets the sessions only it held; the connection's raw id (``None``: stdio).

    The SDK's per-connection teardown (``Connection.exit_stack``) is not on a low-level
    handler's context, hence the private attribute; a test over HTTP catches an SDK change.
    """
    conn = getattr(ctx.session, "_connection", None)
    raw = getattr(conn, "session_id", None)
    if keys.fixed is not None or conn is None or not raw:
        return None
    if not conn.state.get(WATCHED):
        conn.state[WATCHED] = True

        async def release() -> None:
            for session in keys.closed(raw):
                await gateway.release(session)

        conn.exit_stack.push_async_callback(release)
    return str(raw)


async def _hinted(gateway: Gateway, session: str, ctx: ServerRequestContext[Any, Any]) -> bool:
    """Run the selection of the user's text the request carries, if any (``hints.py``);
    True when it loaded tools. A failure is logged: the request itself goes on."""
    text = hint_of(ctx)
    if text is None:
        return False
    try:
        return await gateway.hint(session, text)
    except Exception as exc:  # a hint is advice: the client's request must not fail over it
        log.warning("tooltray gateway: hint for session %r not used: %s", session, exc)
        return False


def _listen(gateway: Gateway, session: str, peer: ServerSession) -> None:
    """Remember how to tell this client its tools changed (an upstream came back, say)."""
    gateway.listeners[session] = peer.send_tool_list_changed


def init_options(server: Server[Any]) -> InitializationOptions:
    """Initialization options announcing ``tools.listChanged``."""
    return server.create_initialization_options(NotificationOptions(tools_changed=True))
