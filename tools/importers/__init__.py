"""Importers: tools from Python callables, OpenAI dicts, MCP listings and catalog files."""

from tooltray.tools.importers.callable import from_callable
from tooltray.tools.importers.catalog import Catalog, load_catalog, read_catalog
from tooltray.tools.importers.mcp import from_mcp, from_mcp_list
from tooltray.tools.importers.openai import from_openai

__all__ = [
    "Catalog",
    "from_callable",
    "from_mcp",
    "from_mcp_list",
    "from_openai",
    "load_catalog",
    "read_catalog",
]
