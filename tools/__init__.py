"""tooltray.tools: what a tool is, how tools are registered, imported, rendered and counted.

The errors load with the package; everything else on first use (a module-level ``__getattr__``),
so a command that only needs an error class or one submodule does not pay for pydantic models,
the importers and the tokenizer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tooltray.tools.errors import (
    ConfigError,
    DuplicateToolError,
    EmbedderError,
    MCPSourceError,
    MCPToolError,
    MetaToolArgumentError,
    ModelError,
    SchemaVersionError,
    StoreError,
    ToolNotAllowedError,
    ToolSpecError,
    TooltrayError,
    UnknownToolError,
)

if TYPE_CHECKING:
    from tooltray.tools.importers import (
        Catalog,
        from_callable,
        from_mcp,
        from_mcp_list,
        from_openai,
        load_catalog,
        read_catalog,
    )
    from tooltray.tools.layer import ToolLayer
    from tooltray.tools.names import did_you_mean, match_key, sanitize_name, strip_prefix
    from tooltray.tools.registry import ToolRegistry
    from tooltray.tools.render import (
        RENDER_PATHS,
        canonical_json,
        render,
        render_anthropic,
        render_openai_chat,
        render_openai_responses,
        render_text,
    )
    from tooltray.tools.spec import Bundle, ToolSpec, check_name, check_parameters
    from tooltray.tools.tokens import TokenCount, block_tokens, count_tokens, tokens_per_tool

_HOMES: dict[str, str] = {
    "Catalog": "tooltray.tools.importers",
    "from_callable": "tooltray.tools.importers",
    "from_mcp": "tooltray.tools.importers",
    "from_mcp_list": "tooltray.tools.importers",
    "from_openai": "tooltray.tools.importers",
    "load_catalog": "tooltray.tools.importers",
    "read_catalog": "tooltray.tools.importers",
    "ToolLayer": "tooltray.tools.layer",
    "did_you_mean": "tooltray.tools.names",
    "match_key": "tooltray.tools.names",
    "sanitize_name": "tooltray.tools.names",
    "strip_prefix": "tooltray.tools.names",
    "ToolRegistry": "tooltray.tools.registry",
    "RENDER_PATHS": "tooltray.tools.render",
    "canonical_json": "tooltray.tools.render",
    "render": "tooltray.tools.render",
    "render_anthropic": "tooltray.tools.render",
    "render_openai_chat": "tooltray.tools.render",
    "render_openai_responses": "tooltray.tools.render",
    "render_text": "tooltray.tools.render",
    "Bundle": "tooltray.tools.spec",
    "ToolSpec": "tooltray.tools.spec",
    "check_name": "tooltray.tools.spec",
    "check_parameters": "tooltray.tools.spec",
    "TokenCount": "tooltray.tools.tokens",
    "block_tokens": "tooltray.tools.tokens",
    "count_tokens": "tooltray.tools.tokens",
    "tokens_per_tool": "tooltray.tools.tokens",
}

__all__ = [
    "RENDER_PATHS",
    "Bundle",
    "Catalog",
    "ConfigError",
    "DuplicateToolError",
    "EmbedderError",
    "MCPSourceError",
    "MCPToolError",
    "MetaToolArgumentError",
    "ModelError",
    "SchemaVersionError",
    "StoreError",
    "TokenCount",
    "ToolLayer",
    "ToolNotAllowedError",
    "ToolRegistry",
    "ToolSpec",
    "ToolSpecError",
    "TooltrayError",
    "UnknownToolError",
    "block_tokens",
    "canonical_json",
    "check_name",
    "check_parameters",
    "count_tokens",
    "did_you_mean",
    "from_callable",
    "from_mcp",
    "from_mcp_list",
    "from_openai",
    "load_catalog",
    "match_key",
    "read_catalog",
    "render",
    "render_anthropic",
    "render_openai_chat",
    "render_openai_responses",
    "render_text",
    "sanitize_name",
    "strip_prefix",
    "tokens_per_tool",
]


def __getattr__(name: str) -> Any:
    """Import an export's home module on first use and cache the export here."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
