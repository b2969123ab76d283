"""Load a catalog file leniently: what strict loading raises on becomes a finding instead.

A catalog with one bad name or one broken schema is exactly the catalog a user wants linted, so
every readable line yields a tool (names sanitised, broken schemas emptied) and each problem an
error finding with its line number. A file that is one JSON tools array (OpenAI, Anthropic, MCP)
is read item by item with the importer ``from_catalog`` uses, each refused item a finding.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooltray.memory.lint.names import checked_bundle, checked_name, dedupe
from tooltray.tools.errors import ToolSpecError, TooltrayError
from tooltray.tools.finding import Finding
from tooltray.tools.grouping import grouped
from tooltray.tools.importers.arrays import spec_of, tool_array
from tooltray.tools.importers.catalog import BUNDLES_FILE
from tooltray.tools.spec import Bundle, ToolSpec


@dataclass
class Loaded:
    """What lint read: usable tools and bundles, and the errors found while reading."""

    tools: list[ToolSpec] = field(default_factory=list)
    bundles: list[Bundle] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def _line_error(line: int, problem: str) -> Finding:
    return Finding("line", "error", (), f"line {line}: {problem}", "fix the line's JSON")


def _spec(row: dict[str, Any], line: int, found: list[Finding]) -> ToolSpec | None:
    raw = row.get("name")
    if not isinstance(raw, str):
        found.append(_line_error(line, f"'name' must be a string, got {raw!r}"))
        return None
    name = checked_name(raw, "tool", found)
    group = row.get("group", row.get("bundle"))
    bundle = checked_bundle(group, found) if isinstance(group, str) else None
    text = row.get("description")
    kwargs: dict[str, Any] = {"name": name, "bundle": bundle, "source": "catalog"}
    kwargs["description"] = text if isinstance(text, str) else ""
    try:
        return ToolSpec(**kwargs, parameters=row.get("parameters") or {})
    except (ToolSpecError, ValueError) as exc:
        found.append(
            Finding("schema", "error", (name,), f"line {line}: {exc}"[:300], "fix the schema")
        )
        return ToolSpec(**kwargs)


def _rows(text: str, found: list[Finding]) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            found.append(_line_error(number, f"not valid JSON ({exc.msg})"))
            continue
        if isinstance(row, dict):
            rows.append((number, row))
        else:
            found.append(_line_error(number, f"expected an object, got {type(row).__name__}"))
    return rows


def _array_specs(items: list[Any], found: list[Finding]) -> list[ToolSpec]:
    """The specs of a whole-file tools array (OpenAI, Anthropic, MCP), read by the importer
    ``from_catalog`` uses; an item it refuses is an error finding naming the item's index."""
    specs = []
    for number, item in enumerate(items):
        try:
            specs.append(spec_of(item, "catalog"))
        except TooltrayError as exc:
            problem = f"item {number}: {str(exc).rstrip('.')}"[:300]
            found.append(Finding("item", "error", (), problem, "fix the item or remove it"))
    return specs


def _bundle_info(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.with_name(BUNDLES_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def bundles_of(tools: list[ToolSpec], info: dict[str, str]) -> list[Bundle]:
    """One bundle per group used by ``tools``, in order of first member."""
    members: dict[str, list[str]] = {}
    for spec in tools:
        if spec.bundle is not None:
            members.setdefault(spec.bundle, []).append(spec.name)
    return [
        Bundle(name=b, description=info.get(b, ""), members=tuple(m)) for b, m in members.items()
    ]


def load_lenient(path: str | Path) -> Loaded:
    """Read a catalog file the way lint needs it (see the module docstring): a ``tools.jsonl``
    file, or one JSON tools array in any format ``from_catalog`` reads (its bundles inferred
    from the names, as ``from_catalog`` does).

    Raises:
        ToolSpecError: the file cannot be read at all.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolSpecError(
            f"Cannot read catalog {file}: {exc}; pass a tools.jsonl file."
        ) from None
    found: list[Finding] = []
    items = tool_array(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if items is None:
            specs = [_spec(row, n, found) for n, row in _rows(text, found)]
        else:
            specs = list(grouped(_array_specs(items, found)))
    tools, clashes = dedupe([s for s in specs if s is not None])
    unique = list(dict.fromkeys(found))  # a bad group name is reported once, not per member
    return Loaded(tools, bundles_of(tools, _bundle_info(file)), unique + clashes)
