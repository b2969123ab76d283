"""load_catalog / read_catalog: the tools.jsonl format, bundles.json, errors with line numbers."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from tooltray.memory.core.menu import bundle_menu
from tooltray.tools.errors import DuplicateToolError, ToolSpecError
from tooltray.tools.importers.catalog import load_catalog, read_catalog
from tooltray.tools.registry import ToolRegistry

DATA = Path("/work/shared/data")


def write(tmp_path: Path, rows: list[Any], name: str = "tools.jsonl") -> Path:
    path = tmp_path / name
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def row(name: str, group: str | None = "g", **kw: Any) -> dict[str, Any]:
    return {"name": name, "description": f"Do {name}.", "parameters": {}, "group": group, **kw}


def test_sample_catalog_with_bundles_json(sample_path: Path) -> None:
    tools, bundles = load_catalog(sample_path)
    assert [t.name for t in tools][:3] == ["read_file", "write_file", "list_dir"]
    assert tools[-1].bundle is None and tools[-1].parameters == {"type": "object", "properties": {}}
    assert [(b.name, len(b.members)) for b in bundles] == [("files", 3), ("weather", 2)]
    assert bundles[1].description == "Forecasts and alerts by city or region."
    assert {t.source for t in tools} == {"catalog"}


def test_inline_bundle_description_and_optional_fields(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            row("a", bundle_description="The  g tools.", tags=["x"], priority=3),
            "",
            row("b", pinned=True),
            {"name": "c", "description": "C.", "bundle": "h"},
        ],
    )
    catalog = read_catalog(path)
    assert [(b.name, b.description) for b in catalog.bundles] == [("g", "The g tools."), ("h", "")]
    a, b, c = catalog.tools
    assert a.tags == ("x",) and a.priority == 3 and b.pinned and c.bundle == "h"


@pytest.mark.parametrize(
    ("rows", "fragment"),
    [
        ([row("a"), "{not json"], "line 2: not valid JSON"),
        ([row("a"), "[1, 2]"], "line 2: expected a JSON object, got list"),
        ([row("a", colour="red")], "line 1 (tool 'a'): unknown field(s) ['colour']"),
        ([{"description": "x"}], "line 1: 'name' must be a string, got None"),
        ([row("bad name")], "line 1 (tool 'bad name'): Invalid tool name"),
        ([row("a", group=" a")], "line 1: Invalid group name ' a'"),
        ([row("a", parameters={"type": "array"})], "line 1 (tool 'a')"),
        ([row("a", parameters={"type": "object", "properties": []})], "properties"),
        ([row("a", bundle="x")], "give 'group' or 'bundle', not both"),
        ([row("a", priority="high")], "field 'priority'"),
        ([row("a", bundle_description="x"), row("b", bundle_description="y")], "line 2"),
        ([row("a", bundle_description=3)], "bundle_description must be a string"),
    ],
)
def test_bad_lines_name_line_and_field(tmp_path: Path, rows: list[Any], fragment: str) -> None:
    with pytest.raises(ToolSpecError) as err:
        read_catalog(write(tmp_path, rows))
    assert fragment in str(err.value)
    assert "tools.jsonl" in str(err.value)


def test_duplicates_and_prefix_collisions(tmp_path: Path) -> None:
    with pytest.raises(DuplicateToolError, match="line 3 .*line 1"):
        read_catalog(write(tmp_path, [row("a"), row("b"), row("a")]))
    with pytest.raises(DuplicateToolError, match="line 2"):
        read_catalog(write(tmp_path, [row("x__open"), row("mcp__x__open")]))


def test_two_servers_tools_of_one_name_load(tmp_path: Path) -> None:
    rows = [row("alpha__search", group="alpha"), row("beta__search", group="Beta Search Server")]
    catalog = read_catalog(write(tmp_path, rows))
    registry = ToolRegistry(catalog.tools, bundles=catalog.bundles)
    assert [s.name for s in registry.allowed()] == ["alpha__search", "beta__search"]
    assert [b.name for b in registry.bundles()] == ["alpha", "Beta Search Server"]
    assert "- Beta Search Server: " in bundle_menu(registry.bundles())  # shown as written


def test_bundles_json_errors(tmp_path: Path) -> None:
    path = write(tmp_path, [row("a")])
    (tmp_path / "bundles.json").write_text('{"nope": "x"}')
    with pytest.raises(ToolSpecError, match="group 'nope' is used by no tool"):
        read_catalog(path)
    (tmp_path / "bundles.json").write_text('["x"]')
    with pytest.raises(ToolSpecError, match="group name -> description"):
        read_catalog(path)
    (tmp_path / "bundles.json").write_text('{"g": "One."}')
    assert read_catalog(path).bundles[0].description == "One."
    path2 = write(tmp_path, [row("a", bundle_description="Other.")], "t2.jsonl")
    with pytest.raises(ToolSpecError, match="differs"):
        read_catalog(path2)


def test_missing_file() -> None:
    with pytest.raises(ToolSpecError, match="Cannot read catalog"):
        load_catalog("/nonexistent/tools.jsonl")


def test_empty_descriptions_warn_once_with_lines(tmp_path: Path) -> None:
    path = write(tmp_path, [row("a"), {"name": "b", "description": " "}, {"name": "c"}])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tools, _ = load_catalog(path)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "2 tool(s) have an empty description (lines 2, 3)" in messages[0]
    assert len(tools) == 3


def test_sanitize_records_original_names(tmp_path: Path) -> None:
    long = "x" * 80
    path = write(tmp_path, [row("PDF&URL", group="A/B c"), row(long, group="A/B c"), row("ok")])
    with pytest.raises(ToolSpecError, match="sanitize=True"):
        read_catalog(path)
    catalog = read_catalog(path, sanitize=True)
    names = [t.name for t in catalog.tools]
    assert names[0] == "PDF_URL" and len(names[1]) == 64 and names[2] == "ok"
    assert catalog.renamed == {"PDF_URL": "PDF&URL", names[1]: long}
    assert catalog.renamed_bundles == {}  # a group name is kept as written
    assert catalog.bundles[0].name == "A/B c"
    assert catalog.bundles[0].members == ("PDF_URL", names[1])


def test_sanitize_collisions_raise(tmp_path: Path) -> None:
    path = write(tmp_path, [row("a b"), row("a&b")])
    with pytest.raises(DuplicateToolError, match="both sanitise to 'a_b'"):
        read_catalog(path, sanitize=True)
    path = write(tmp_path, [row("a_b"), row("a b")])
    with pytest.raises(DuplicateToolError, match="line 2"):
        read_catalog(path, sanitize=True)


STRICT_FAILURES = {"metatool": 67, "sealtools": 3593, "toolbench": 61}  # group names as written


@pytest.mark.parametrize(
    ("corpus", "count", "bundles"),
    [
        ("bfcl_multiturn", 130, 9),
        ("bfcl", 1853, 0),  # no groups, and none inferred: a jsonl file has the field
        ("metatool", 199, 0),
        ("sealtools", 4076, 2276),
        ("toolbench", 2479, 811),
    ],
)
def test_all_corpora_import(corpus: str, count: int, bundles: int) -> None:
    path = DATA / corpus / "tools.jsonl"
    if corpus in STRICT_FAILURES:
        with pytest.raises(ToolSpecError, match=f"line {STRICT_FAILURES[corpus]}\\b"):
            read_catalog(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        catalog = read_catalog(path, sanitize=True)
    assert len(catalog.tools) == count and len(catalog.bundles) == bundles
    assert not catalog.inferred
    registry = ToolRegistry(catalog.tools, bundles=catalog.bundles)
    assert len(registry.allowed()) == count
    for new, original in catalog.renamed.items():
        assert registry.resolve(new).name == new and new != original
