"""An MCP server that can be told to die, for the gateway's crash tests: ``python flaky_server.py``.

``crash`` ends the process at once (as a segfault or an OOM kill would), mid-call.
"""

from __future__ import annotations

import os

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


if __name__ == "__main__":
    server.run("stdio")
