"""Run the gateway over stdio (one client, the default) or streamable HTTP (many clients).

Either way the upstreams start in the background while the client connects; ``tools/list``
waits for their first start attempt (bounded), so the first listing already has their tools.
On exit the trinket stores whatever it deferred; the upstream processes are stopped.
"""

from __future__ import annotations

import logging

import anyio
from mcp.server.stdio import stdio_server
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tooltray.memory.config import Settings
from tooltray.memory.gateway.access import (
    StaticTokens,
    auth_settings,
    check_tokens,
    transport_security,
)
from tooltray.memory.gateway.config import GatewayConfig
from tooltray.memory.gateway.gateway import Gateway
from tooltray.memory.gateway.hint_route import hint_route
from tooltray.memory.gateway.server import SESSION_HEADER, SessionKeys, build_server, init_options
from tooltray.memory.gateway.state import GatewayState, state_path
from tooltray.tools.errors import ConfigError

log = logging.getLogger("tooltray.gateway")
MAX_BODY_BYTES = 1_000_000  # one request's JSON; bounds arguments before any work


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` for ``--http``.

    Raises:
        ConfigError: not of that form.
    """
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--http {value!r}: use HOST:PORT, e.g. --http 127.0.0.1:8765.")
    return host.strip("[]"), int(port)


async def serve_stdio(gateway: Gateway, session: str, fork: str | None = None) -> None:
    """Serve one client on this process's stdin/stdout until it disconnects."""
    server = build_server(gateway, SessionKeys(session, gateway.state, fork))
    async with anyio.create_task_group() as tg:
        tg.start_soon(gateway.run)
        problem = await gateway.policy_problem()
        if problem is None:
            async with stdio_server() as (read, write):
                await server.run(read, write, init_options(server))
        tg.cancel_scope.cancel()
    if problem is not None:
        raise problem


def http_app(gateway: Gateway, settings: Settings, host: str, port: int) -> ASGIApp:
    """The streamable-HTTP app: bearer tokens when configured (required off loopback),
    Host/Origin checked for the address, bodies bounded, closed sessions released; beside
    ``/mcp``, the hint route ``tooltray hint`` posts to (``hint_route.py``).

    Raises:
        ConfigError: an exposed address without a token, or a wildcard one without hosts.
    """
    tokens = check_tokens(settings, host)
    keys = SessionKeys(None, gateway.state)
    server = build_server(gateway, keys)
    security = transport_security(settings, host, port)
    app = server.streamable_http_app(
        host=host,
        transport_security=security,
        max_request_body_size=MAX_BODY_BYTES,
        session_idle_timeout=settings.gateway_session_idle,
        auth=auth_settings(host, port) if tokens else None,
        token_verifier=StaticTokens(tokens) if tokens else None,
        custom_starlette_routes=[hint_route(gateway, keys, security, bool(tokens))],
    )
    return CloseWatch(app, gateway, keys)


class CloseWatch:
    """ASGI wrapper: once a client's ``DELETE`` (closing its MCP session) succeeded, the
    gateway forgets the tooltray sessions only that connection held, before the client hears
    back. A session the SDK ends otherwise (idle timeout) is released by
    :func:`~tooltray.memory.gateway.server.release_on_end`."""

    def __init__(self, app: ASGIApp, gateway: Gateway, keys: SessionKeys) -> None:
        self.app, self.gateway, self.keys = app, gateway, keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "DELETE":
            await self.app(scope, receive, send)
            return
        raw = Headers(scope=scope).get(SESSION_HEADER)

        async def watch(message: Message) -> None:
            if raw and message["type"] == "http.response.start" and message["status"] < 300:
                for session in self.keys.closed(raw):  # released before the client hears back
                    await self.gateway.release(session)
            await send(message)

        await self.app(scope, receive, watch)


async def serve_http(gateway: Gateway, app: ASGIApp, host: str, port: int) -> None:
    """Serve streamable HTTP at ``http://HOST:PORT/mcp`` until cancelled."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    web = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(gateway.run)
        problem = await gateway.policy_problem()
        if problem is None:
            log.warning("tooltray gateway: serving streamable HTTP at http://%s:%d/mcp", host, port)
            await web.serve()
        tg.cancel_scope.cancel()
    if problem is not None:
        raise problem


def run_gateway(
    config: GatewayConfig,
    settings: Settings,
    *,
    session: str,
    http: str | None = None,
    fork: str | None = None,
    **upstream_options: float,
) -> None:
    """Block serving the gateway; the CLI's entry point."""
    listen = parse_listen(http) if http else None
    gateway = Gateway(config, settings, GatewayState(state_path(settings)), **upstream_options)
    try:
        if listen is None:
            anyio.run(serve_stdio, gateway, session, fork)
        else:
            app = http_app(gateway, settings, *listen)
            anyio.run(serve_http, gateway, app, *listen)
    finally:
        gateway.close()
