"""A small real MCP server over stdio, for the agent tests: ``python mcp_server.py``.

Written with the official SDK's high-level server (``MCPServer``, named ``FastMCP`` before mcp 2).
"""

from __future__ import annotations

try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]

server = Server("mathtext")


@server.tool()
def add_numbers(a: float, b: float) -> str:
    """Add two numbers and return the sum."""
    total = a + b
    return str(int(total) if total == int(total) else total)


@server.tool()
def reverse_text(text: str) -> str:
    """Reverse a piece of text character by character."""
    return text[::-1]


@server.tool()
def long_report(lines: int = 200) -> str:
    """Produce a long numbered report, to exercise result shortening."""
    return "\n".join(f"report line {i:04d}: all systems nominal" for i in range(lines))


if __name__ == "__main__":
    server.run("stdio")
