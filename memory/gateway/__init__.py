"""tooltray.memory.gateway: ``tooltray mcp serve``, an MCP gateway in front of other MCP servers.

A client of the core (it drives a :class:`~tooltray.memory.ToolLoaderTrinket` through its public
API); the core never imports it. Needs the ``mcp`` extra.
"""

from tooltray.memory.gateway.catalog import GatewayCatalog, Route
from tooltray.memory.gateway.config import (
    GatewayConfig,
    GatewayConfigError,
    ServerConfig,
    load_config,
    parse_config,
)
from tooltray.memory.gateway.gateway import Gateway
from tooltray.memory.gateway.serve import parse_listen, run_gateway, serve_http, serve_stdio
from tooltray.memory.gateway.server import SessionKeys, build_server
from tooltray.memory.gateway.upstream import Upstream, UpstreamError

__all__ = [
    "Gateway",
    "GatewayCatalog",
    "GatewayConfig",
    "GatewayConfigError",
    "Route",
    "ServerConfig",
    "SessionKeys",
    "Upstream",
    "UpstreamError",
    "build_server",
    "load_config",
    "parse_config",
    "parse_listen",
    "run_gateway",
    "serve_http",
    "serve_stdio",
]
