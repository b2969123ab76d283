"""Read a tool catalog file: one JSON tool per line, grouped into bundles.

Format (``tools.jsonl``, UTF-8, blank lines ignored), one object per line:

=====================  =========================================================================
``name``               required; 1-64 of ``[a-zA-Z0-9_.-]``
``description``        string (empty allowed, warned once per file)
``parameters``         JSON Schema object; ``{}`` or absent means "no arguments" (``null``,
                       ``0`` or ``[]`` are refused)
``group``              bundle name or ``null`` (``bundle`` is accepted as a synonym)
``bundle_description`` optional one-line description of this line's group; lines must agree
``tags``               optional list of strings; ``priority`` int; ``pinned`` bool
=====================  =========================================================================

A file that is one JSON document (an OpenAI ``tools=`` array, an Anthropic ``tools`` array, an
MCP ``tools/list`` result) is read by :mod:`tooltray.tools.importers.arrays` instead.

An optional ``bundles.json`` next to the file maps group names to one-line descriptions:
``{"GorillaFileSystem": "Files and folders: ls, cd, cat, ..."}``. Every key must be a group used
in the file, and must agree with any ``bundle_description`` given inline.

Names that break the provider rule raise with their line number, unless ``sanitize=True``:
then invalid characters become ``_`` (long names are cut and hashed, see
:func:`~tooltray.tools.names.sanitize_name`) and :attr:`Catalog.renamed` records the originals.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooltray.tools.errors import DuplicateToolError, ToolSpecError, shown
from tooltray.tools.grouping import grouped
from tooltray.tools.importers.arrays import read_tool_array, tool_array
from tooltray.tools.importers.build import make_spec
from tooltray.tools.names import META_NAMES, clash_key, sanitize_name
from tooltray.tools.spec import MAX_BUNDLE, Bundle, ToolSpec, check_bundle, check_name

FIELDS = frozenset(
    {"name", "description", "parameters", "group", "bundle", "bundle_description", "tags"}
    | {"priority", "pinned"}
)
BUNDLES_FILE = "bundles.json"
EXPECTED = (
    "a catalog is a UTF-8 tools.jsonl file with one JSON tool per line, e.g. "
    '{"name": "get_weather", "description": "...", "parameters": {}, "group": "weather"}, '
    "or one JSON document: an OpenAI or Anthropic tools array, or an MCP tools/list result."
)


@dataclass
class Catalog:
    """What :func:`read_catalog` found.

    Attributes:
        tools: the specs, in file order.
        bundles: one per group, in order of first member, with descriptions when given.
        renamed: sanitised tool name -> original name (only with ``sanitize=True``).
        renamed_bundles: group name with its whitespace collapsed -> original (``sanitize=True``).
        path: the file read.
        inferred: the file was a tools array without bundles, so they were inferred from the names
            (:mod:`tooltray.tools.grouping`); ``explain`` says so.
    """

    tools: list[ToolSpec] = field(default_factory=list)
    bundles: list[Bundle] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    renamed_bundles: dict[str, str] = field(default_factory=dict)
    path: Path = Path(".")
    inferred: bool = False


def _grouped(catalog: Catalog) -> Catalog:
    """``catalog`` (a tools array, a format without bundles) with bundles inferred from its
    names when none of its tools has one."""
    if any(t.bundle for t in catalog.tools):
        return catalog
    catalog.tools = grouped(catalog.tools)
    members: dict[str, list[str]] = {}
    for spec in catalog.tools:
        if spec.bundle is not None:
            members.setdefault(spec.bundle, []).append(spec.name)
    catalog.bundles = [Bundle(name=b, description="", members=tuple(m)) for b, m in members.items()]
    catalog.inferred = bool(members)
    return catalog


class _Reader:
    def __init__(self, path: Path, sanitize: bool, source: str) -> None:
        self.path, self.sanitize, self.source = path, sanitize, source
        self.out = Catalog(path=path)
        self.lines: dict[str, int] = {}
        self.keys: dict[str, int] = {}
        self.members: dict[str, list[str]] = {}
        self.info: dict[str, tuple[str, str]] = {}
        self.empty: list[int] = []

    def where(self, line: int, name: Any = None) -> str:
        tool = f" (tool {shown(name)})" if isinstance(name, str) else ""
        return f"{self.path} line {line}{tool}"

    def rename(self, raw: Any, line: int, what: str, names: dict[str, str]) -> str:
        if not isinstance(raw, str):
            key = "name" if what == "tool" else "group"
            raise ToolSpecError(f"{self.where(line)}: {key!r} must be a string, got {shown(raw)}.")
        if not self.sanitize:
            try:
                checked: str = check_name(raw, what)
                return checked
            except ToolSpecError as exc:
                fix = " Or load with sanitize=True (--sanitize) to map invalid characters to '_'."
                where = self.where(line, raw if what == "tool" else None)
                raise ToolSpecError(f"{where}: {exc}{fix}") from None
        new: str = sanitize_name(raw)
        if names.setdefault(new, raw) != raw:
            raise DuplicateToolError(
                f"{self.where(line, raw)}: {what} {shown(raw)} and {shown(names[new])} both "
                f"sanitise to {new!r}; rename one of them in the file."
            )
        if new == raw:
            del names[new]
        return new

    def group(self, raw: Any, line: int) -> str:
        """A group (bundle) name as written: any one line of text (``check_bundle``)."""
        if not isinstance(raw, str):
            raise ToolSpecError(f"{self.where(line)}: 'group' must be a string, got {shown(raw)}.")
        clean = " ".join(raw.split())[:MAX_BUNDLE].rstrip() if self.sanitize else raw
        try:
            check_bundle(clean or raw, "group")
        except ToolSpecError as exc:
            fix = "" if self.sanitize else " Or load with sanitize=True (--sanitize)."
            raise ToolSpecError(f"{self.where(line)}: {exc}{fix}") from None
        if clean != raw:
            self.out.renamed_bundles[clean] = raw
        return clean

    def parse(self, text: str, line: int) -> dict[str, Any]:
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ToolSpecError(f"{self.where(line)}: not valid JSON ({exc.msg}).") from None
        except RecursionError:
            raise ToolSpecError(
                f"{self.where(line)}: nested deeper than the JSON reader allows (about "
                f"{sys.getrecursionlimit():,} levels); flatten the schema, e.g. move repeated "
                "parts into $defs."
            ) from None
        if not isinstance(row, dict):
            got = type(row).__name__
            raise ToolSpecError(f"{self.where(line)}: expected a JSON object, got {got}.")
        unknown = sorted(set(row) - FIELDS)
        if unknown:
            raise ToolSpecError(
                f"{self.where(line, row.get('name'))}: unknown field(s) {unknown}; "
                f"allowed: {sorted(FIELDS)}."
            )
        if "group" in row and "bundle" in row:
            raise ToolSpecError(f"{self.where(line)}: give 'group' or 'bundle', not both.")
        return row

    def add(self, row: dict[str, Any], line: int) -> None:
        name = self.rename(row.get("name"), line, "tool", self.out.renamed)
        raw_group = row.get("group", row.get("bundle"))
        group = None
        if raw_group is not None:
            group = self.group(raw_group, line)
        self.check_unique(name, row.get("name"), line)
        self.check_fields(name, row, line)
        extra = {k: row[k] for k in ("tags", "priority", "pinned") if k in row}
        if "tags" in extra and isinstance(extra["tags"], list):
            extra["tags"] = tuple(extra["tags"])
        spec = make_spec(
            self.where(line, row.get("name")),
            name=name,
            description=row.get("description", ""),
            parameters=row.get("parameters", {}),
            bundle=group,
            source=self.source,
            **extra,
        )
        if not spec.description.strip():
            self.empty.append(line)
        self.out.tools.append(spec)
        if group is not None:
            self.members.setdefault(group, []).append(name)
            if "bundle_description" in row:
                self.describe(group, row["bundle_description"], self.where(line))

    def check_fields(self, name: str, row: dict[str, Any], line: int) -> None:
        """Refuse a meta-tool's name and ``parameters`` that are not a schema object: ``0``,
        ``[]`` or ``null`` used to pass as "no arguments" and hide a broken export."""
        if name in META_NAMES:
            raise ToolSpecError(
                f"{self.where(line, name)}: {name!r} is the name of a tooltray meta-tool, which "
                "would shadow this tool; rename it (say, to "
                f"{(row.get('group') or row.get('bundle') or 'my')!s}_{name})."
            )
        if "parameters" in row and not isinstance(row["parameters"], dict):
            raise ToolSpecError(
                f"{self.where(line, name)}: 'parameters' must be a JSON Schema object, got "
                f"{json.dumps(row['parameters'])[:40]}; write {{}} (or leave the field out) for "
                'a tool without arguments, else {"type": "object", "properties": {...}}.'
            )

    def check_unique(self, name: str, raw: Any, line: int) -> None:
        first = self.lines.get(name) or self.keys.get(clash_key(name))
        if first is not None:
            raise DuplicateToolError(
                f"{self.where(line, raw)}: the name clashes with the tool on line {first} "
                "(same name, or the same once an mcp__ prefix is stripped); rename one."
            )
        self.lines[name] = self.keys[clash_key(name)] = line

    def describe(self, group: str, text: Any, origin: str) -> None:
        if not isinstance(text, str):
            raise ToolSpecError(f"{origin}: bundle_description must be a string.")
        text = " ".join(text.split())
        old = self.info.setdefault(group, (text, origin))
        if old[0] != text:
            raise ToolSpecError(
                f"{origin}: the description of group {group!r} differs from the one at "
                f"{old[1]}; give one description per group."
            )

    def read_bundles_file(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ToolSpecError(f"{path}: cannot read bundle descriptions ({exc}).") from None
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise ToolSpecError(f"{path}: expected an object of group name -> description.")
        back = {orig: new for new, orig in self.out.renamed_bundles.items()}
        for raw, text in data.items():
            group = back.get(raw, raw)
            if group not in self.members:
                raise ToolSpecError(
                    f"{path}: group {shown(raw)} is used by no tool in {self.path}."
                )
            self.describe(group, text, str(path))

    def finish(self) -> Catalog:
        self.out.bundles = [
            Bundle(name=g, description=self.info.get(g, ("", ""))[0], members=tuple(m))
            for g, m in self.members.items()
        ]
        if self.empty:
            shown = ", ".join(map(str, self.empty[:10])) + (", ..." if len(self.empty) > 10 else "")
            warnings.warn(
                f"{self.path}: {len(self.empty)} tool(s) have an empty description (lines "
                f"{shown}); retrieval and the model rely on it, so write one sentence each.",
                stacklevel=3,
            )
        return self.out


def read_catalog(
    path: str | os.PathLike[str],
    *,
    sanitize: bool = False,
    source: str = "catalog",
    bundles_file: str | os.PathLike[str] | None = None,
) -> Catalog:
    """Read a ``tools.jsonl`` catalog (format in the module docstring) into a :class:`Catalog`.

    Args:
        path: the jsonl file.
        sanitize: map invalid names onto the rule instead of raising; see ``Catalog.renamed``.
        source: the ``ToolSpec.source`` label.
        bundles_file: bundle descriptions; default ``bundles.json`` beside ``path`` if present.

    Raises:
        ToolSpecError: unreadable, not UTF-8 or without a single tool; bad JSON, unknown field,
            bad name or schema (with line).
        DuplicateToolError: two lines define the same (or prefix-equivalent) name.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ToolSpecError(f"Cannot read catalog {file}: {exc.strerror or exc}.") from None
    except UnicodeDecodeError as exc:
        raise ToolSpecError(
            f"Cannot read catalog {file}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at "
            f"offset {exc.start}); {EXPECTED}"
        ) from None
    items = tool_array(text)
    if items is not None:
        return _grouped(Catalog(tools=read_tool_array(file, items, source), path=file))
    reader = _Reader(file, sanitize, source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                reader.add(reader.parse(line, number), number)
    extra = Path(bundles_file) if bundles_file is not None else file.with_name(BUNDLES_FILE)
    if not reader.out.tools:
        raise ToolSpecError(f"Catalog {file} has no tools; {EXPECTED}")
    if bundles_file is not None or extra.is_file():
        reader.read_bundles_file(extra)
    return reader.finish()  # a jsonl file has ``group``: no group is the author's choice


def load_catalog(
    path: str | os.PathLike[str], *, sanitize: bool = False, source: str = "catalog"
) -> tuple[list[ToolSpec], list[Bundle]]:
    """The tools and bundles of a catalog file (see :func:`read_catalog`)."""
    catalog = read_catalog(path, sanitize=sanitize, source=source)
    return catalog.tools, catalog.bundles
