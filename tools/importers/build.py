"""Build a :class:`ToolSpec` so that every failure is a :class:`ToolSpecError` with context.

Constructing ``ToolSpec`` directly raises pydantic's ``ValidationError``; importers call
:func:`make_spec` instead so users catch one tooltray error that names the tool and the field.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from tooltray.tools.errors import ToolSpecError
from tooltray.tools.spec import ToolSpec


def explain(exc: ValidationError) -> str:
    """One line per problem: the original tooltray message, or ``field: pydantic message``."""
    parts = []
    for err in exc.errors():
        inner = (err.get("ctx") or {}).get("error")
        if isinstance(inner, ToolSpecError):
            parts.append(str(inner))
        else:
            where = ".".join(str(x) for x in err["loc"]) or "spec"
            parts.append(f"field {where!r}: {err['msg']}")
    return "; ".join(parts)


def make_spec(label: str, **fields: Any) -> ToolSpec:
    """``ToolSpec(**fields)``, re-raising validation failures as ``ToolSpecError(label: ...)``."""
    try:
        return ToolSpec(**fields)
    except ValidationError as exc:
        raise ToolSpecError(f"{label}: {explain(exc)}") from None
