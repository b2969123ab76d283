"""Run the gateway over stdio (one client, the default) or streamable HTTP (many clients).

Either way the upstreams start in the background while the client connects; ``tools/list``
waits for their first start attempt (bounded), so the first listing already has their tools.
On exit the trinket stores whatever it deferred; the upstream processes are stopped.
"""

from __future__ import annotations

import logging

import anyio
from mcp.server.stdio import stdio_server

from tooltray.memory.config import Settings
from tooltray.memory.gateway.config import GatewayConfig
from tooltray.memory.gateway.gateway import Gateway
from tooltray.memory.gateway.server import SessionKeys, build_server, init_options
from tooltray.tools.errors import ConfigError

log = logging.getLogger("tooltray.gateway")


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
    server = build_server(gateway, SessionKeys(session, fork))
    async with anyio.create_task_group() as tg:
        tg.start_soon(gateway.run)
        async with stdio_server() as (read, write):
            await server.run(read, write, init_options(server))
        tg.cancel_scope.cancel()


async def serve_http(gateway: Gateway, host: str, port: int) -> None:
    """Serve streamable HTTP at ``http://HOST:PORT/mcp`` until cancelled."""
    import uvicorn

    server = build_server(gateway, SessionKeys(None))
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    web = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(gateway.run)
        log.warning("tooltray gateway: serving streamable HTTP at http://%s:%d/mcp", host, port)
        await web.serve()
        tg.cancel_scope.cancel()


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
    gateway = Gateway(config, settings, **upstream_options)
    try:
        if listen is None:
            anyio.run(serve_stdio, gateway, session, fork)
        else:
            anyio.run(serve_http, gateway, *listen)
    finally:
        gateway.close()
