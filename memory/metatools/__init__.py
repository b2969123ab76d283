"""The meta-tools (load_tools, unload_tools, fallback, read_result): specs, parsing, effects."""

from tooltray.memory.metatools.meta_tools import (
    EVERY_TOOL,
    FALLBACK,
    LOAD_TOOLS,
    META_TOOL_NAMES,
    READ_RESULT,
    UNLOAD_TOOLS,
    LoadRequest,
    Outcome,
    fallback,
    load_tools,
    meta_tool_specs,
    parse_load,
    parse_read_result,
    parse_unload,
    unload_tools,
)

__all__ = [
    "EVERY_TOOL",
    "FALLBACK",
    "LOAD_TOOLS",
    "META_TOOL_NAMES",
    "READ_RESULT",
    "UNLOAD_TOOLS",
    "LoadRequest",
    "Outcome",
    "fallback",
    "load_tools",
    "meta_tool_specs",
    "parse_load",
    "parse_read_result",
    "parse_unload",
    "unload_tools",
]
