"""Parameters without descriptions: the model guesses their meaning and format from the name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tooltray.tools.finding import Finding
from tooltray.tools.spec import ToolSpec

KIND = "parameter"


def undescribed(spec: ToolSpec) -> list[str]:
    """Top-level parameters of ``spec`` with no (or a blank) ``description``."""
    props: dict[str, Any] = spec.parameters.get("properties") or {}
    out = []
    for name, schema in props.items():
        text = schema.get("description") if isinstance(schema, dict) else None
        if not isinstance(text, str) or not text.strip():
            out.append(name)
    return out


def parameter_findings(tools: Sequence[ToolSpec]) -> list[Finding]:
    """One warning per tool with undescribed parameters, naming them."""
    found = []
    for spec in tools:
        names = undescribed(spec)
        if names:
            total = len(spec.parameters.get("properties") or {})
            listed = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            found.append(
                Finding(
                    KIND,
                    "warning",
                    (spec.name,),
                    f"{len(names)} of {total} parameters undescribed: {listed}",
                    "give each parameter a description: meaning, format, an example value",
                )
            )
    return found
