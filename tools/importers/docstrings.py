"""Just enough Google-style docstring parsing to describe a callable as a tool.

The summary (everything before the first section) becomes the tool description; the ``Args:``
section gives each parameter's description. Other sections are ignored.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

ARG_SECTIONS = frozenset({"args", "arguments", "parameters", "params", "keyword args"})
OTHER_SECTIONS = frozenset(
    {
        "returns", "return", "yields", "yield", "raises", "raise", "examples", "example",
        "note", "notes", "attributes", "see also", "warning", "warnings", "todo", "references",
    }
)  # fmt: skip
_ARG_LINE = re.compile(r"^(\*{0,2}[A-Za-z_]\w*)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")


@dataclass
class Docstring:
    """The parts of a docstring a tool needs."""

    summary: str = ""
    args: dict[str, str] = field(default_factory=dict)


def _section(line: str) -> str | None:
    stripped = line.strip()
    if line[:1].isspace() or not stripped.endswith(":"):
        return None
    name = stripped[:-1].strip().lower()
    return name if name in ARG_SECTIONS | OTHER_SECTIONS else None


def _paragraphs(lines: list[str]) -> str:
    blocks = "\n".join(lines).split("\n\n")
    return "\n\n".join(" ".join(b.split()) for b in blocks if b.strip())


def parse_docstring(doc: str | None) -> Docstring:
    """Split ``doc`` into its summary and its ``Args:`` descriptions (whitespace collapsed)."""
    out = Docstring()
    summary: list[str] = []
    section: str | None = None
    current: str | None = None
    base: int | None = None
    for line in inspect.cleandoc(doc or "").splitlines():
        header = _section(line)
        if header is not None:
            section, current, base = header, None, None
        elif section is None:
            summary.append(line)
        elif section in ARG_SECTIONS and line.strip():
            indent = len(line) - len(line.lstrip())
            match = _ARG_LINE.match(line.strip())
            if match and (base is None or indent <= base):
                base, current = indent, match.group(1).lstrip("*")
                out.args[current] = match.group(3).strip()
            elif current is not None:
                out.args[current] = f"{out.args[current]} {line.strip()}".strip()
    out.summary = _paragraphs(summary)
    return out
