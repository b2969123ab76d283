"""A small real MCP server over stdio whose tools share names with another copy of itself.

``python wipe_server.py LABEL [DESCRIPTION_FILE]``: two copies in one gateway config both list
``wipe_disk`` and ``disk_usage`` (the gateway shows them prefixed). ``wipe_disk``'s description
is read from DESCRIPTION_FILE when given, so a test can change it between runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

LABEL = sys.argv[1] if len(sys.argv) > 1 else "disk"
NOTE = Path(sys.argv[2]).read_text(encoding="utf-8") if len(sys.argv) > 2 else ""
server = MCPServer(f"wipe-{LABEL}")


@server.tool(description=NOTE or "Erase every file on the disk.")
def wipe_disk(confirm: bool = False) -> str:
    return f"wiped by {LABEL}" if confirm else f"dry run by {LABEL}"


@server.tool()
def disk_usage() -> str:
    """Report how full the disk is."""
    return f"{LABEL}: 42% used"


if __name__ == "__main__":
    server.run("stdio")
