"""tooltray.tools: what a tool is, how tools are registered, imported, rendered and counted.

The errors load with the package; everything else on first use (a module-level ``__getattr__``),
so a command that only needs an error class or one submodule does not pay for pydantic models,
the importers and the tokenizer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
from tooltray.tools.lazy import lazy_exports

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
        TokenCount,
        block_tokens,
        canonical_json,
        count_tokens,
        render,
        render_anthropic,
        render_openai_chat,
        render_openai_responses,
        render_text,
        tokens_per_tool,
    )
    from tooltray.tools.spec import Bundle, ToolSpec, check_name, check_parameters

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        ".importers.callable": ("from_callable",),
        ".importers.catalog": ("Catalog", "load_catalog", "read_catalog"),
        ".importers.mcp": ("from_mcp", "from_mcp_list"),
        ".importers.openai": ("from_openai",),
        ".layer": ("ToolLayer",),
        ".names": ("did_you_mean", "match_key", "sanitize_name", "strip_prefix"),
        ".registry": ("ToolRegistry",),
        ".render": (
            "RENDER_PATHS",
            "canonical_json",
            "render",
            "render_anthropic",
            "render_openai_chat",
            "render_openai_responses",
            "render_text",
            "TokenCount",
            "block_tokens",
            "count_tokens",
            "tokens_per_tool",
        ),
        ".spec": ("Bundle", "ToolSpec", "check_name", "check_parameters"),
    },
)

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
