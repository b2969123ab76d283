"""An MCP server that can be told to die, for the gateway's fault tests.

``python flaky_server.py`` serves stdio; ``python flaky_server.py --http PORT`` serves streamable
HTTP on loopback. ``crash`` ends the process at once (as a segfault or an OOM kill would), mid-call;
``hang`` blocks the whole server;
``wait_seconds`` keeps a call in flight.
"""

from __future__ import annotations

import os
import sys
import time

import anyio

try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]

server = Server("flaky")


@server.tool()
def echo_back(text: str) -> str:
    """Echo the text back, with the server's process id."""
    return f"{text} (pid {os.getpid()})"


@server.tool()
def crash() -> str:
    """Kill this server process immediately."""
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Block the server's event loop for a minute: it stops answering anything, pings included."""
    time.sleep(60)
    return "woke up"


@server.tool()
async def wait_seconds(seconds: float) -> str:
    """Wait, then say how long."""
    await anyio.sleep(seconds)
    return f"waited {seconds} s"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
