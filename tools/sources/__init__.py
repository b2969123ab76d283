"""Live tool sources: tools served by another process (MCP servers over stdio)."""

from tooltray.tools.errors import MCPSourceError, MCPToolError
from tooltray.tools.sources.mcp import MCPSource

__all__ = [
    "MCPSource",
    "MCPSourceError",
    "MCPToolError",
]
