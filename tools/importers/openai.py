"""Import OpenAI-style function definitions: Chat Completions, Responses, or bare dicts.

Accepted shapes::

    {"type": "function", "function": {"name", "description", "parameters", "strict"?}}  # chat
    {"type": "function", "name", "description", "parameters", "strict"?}                # responses
    {"name", "description", "parameters"}                                               # bare

``strict`` is a request option, not part of the tool, and is dropped (renderers emit
``strict: false`` where the Responses API needs a value). Any other unknown key raises, so no
field is lost silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooltray.tools.errors import ToolSpecError, shown, shown_keys
from tooltray.tools.importers.build import make_spec
from tooltray.tools.spec import ToolSpec

_FUNCTION_KEYS = frozenset({"name", "description", "parameters", "strict"})


def _function_part(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    kind = tool.get("type", "function")
    if kind != "function":
        raise ToolSpecError(
            f"OpenAI tool of type {shown(kind)} cannot be imported: only 'function' tools have a "
            "name and a parameter schema; built-in tools (web_search, ...) are passed directly."
        )
    if "function" in tool:
        extra = set(tool) - {"type", "function"}
        if extra:
            raise ToolSpecError(
                f"OpenAI chat tool has unexpected keys {shown_keys(extra)} beside 'function'."
            )
        inner = tool["function"]
        if not isinstance(inner, Mapping):
            raise ToolSpecError("OpenAI chat tool: 'function' must be an object.")
        return inner
    return {k: v for k, v in tool.items() if k != "type"}


def spec_from_fields(
    fields: Mapping[str, Any], what: str, allowed: frozenset[str], **extra: Any
) -> ToolSpec:
    """Build a spec from ``name``/``description``/``parameters`` with a precise error prefix."""
    name = fields.get("name")
    label = f"{what} {shown(name)}" if isinstance(name, str) else what
    unknown = set(fields) - allowed
    if unknown:
        raise ToolSpecError(
            f"{label}: unknown keys {shown_keys(unknown)}; expected {sorted(allowed)}."
        )
    if not isinstance(name, str):
        raise ToolSpecError(f"{label}: missing 'name' (a string of 1-64 [a-zA-Z0-9_.-]).")
    description = fields.get("description") or ""
    if not isinstance(description, str):
        raise ToolSpecError(f"{label}: 'description' must be a string.")
    parameters = fields.get("parameters")
    return make_spec(
        label, name=name, description=description, parameters=parameters or {}, **extra
    )


def from_openai(
    tool: Mapping[str, Any], *, bundle: str | None = None, source: str = "openai"
) -> ToolSpec:
    """Build a :class:`ToolSpec` from an OpenAI Chat Completions, Responses or bare tool dict.

    Raises:
        ToolSpecError: not a dict, a non-function tool type, unknown keys, a bad name or schema.
    """
    if not isinstance(tool, Mapping):
        raise ToolSpecError(f"OpenAI tool must be a dict, got {type(tool).__name__}.")
    fields = _function_part(tool)
    return spec_from_fields(fields, "OpenAI tool", _FUNCTION_KEYS, bundle=bundle, source=source)
