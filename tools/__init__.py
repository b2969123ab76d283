"""tooltray.tools: what a tool is, how tools are registered, imported, rendered and counted."""

from tooltray.tools.errors import (
    ConfigError,
    DuplicateToolError,
    EmbedderError,
    MetaToolArgumentError,
    SchemaVersionError,
    StoreError,
    ToolNotAllowedError,
    ToolSpecError,
    TooltrayError,
    UnknownToolError,
)
from tooltray.tools.spec import Bundle, ToolSpec, check_name, check_parameters

__all__ = [
    "Bundle",
    "ConfigError",
    "DuplicateToolError",
    "EmbedderError",
    "MetaToolArgumentError",
    "SchemaVersionError",
    "StoreError",
    "ToolNotAllowedError",
    "ToolSpec",
    "ToolSpecError",
    "TooltrayError",
    "UnknownToolError",
    "check_name",
    "check_parameters",
]
