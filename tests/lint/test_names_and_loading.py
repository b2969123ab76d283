"""Lenient loading: what strict loading refuses becomes an error finding, and lint still runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tooltray.memory.lint import load_lenient
from tooltray.memory.lint.names import dedupe
from tooltray.tools.errors import ToolSpecError
from tooltray.tools.importers.catalog import load_catalog

ROWS = [
    {"name": "read file", "description": "Read a text file.", "group": "my files"},
    {"name": "disk__write_file", "description": "Write a text file.", "group": "my files"},
    {"name": "mcp__disk__write_file", "description": "Write bytes to disk.", "group": None},
    {"name": "search", "description": "Search the web.", "parameters": {"type": "string"}},
]


def test_strict_loading_refuses_what_lint_reads(tmp_path: Path, write: Any) -> None:
    path = write(tmp_path / "tools.jsonl", ROWS)
    with pytest.raises(ToolSpecError):
        load_catalog(path)
    loaded = load_lenient(path)
    assert [t.name for t in loaded.tools] == ["read_file", "disk__write_file", "search"]
    assert [b.name for b in loaded.bundles] == ["my files"]  # a bundle name as written
    kinds = [(f.kind, f.tools) for f in loaded.findings]
    assert kinds == [
        ("name", ("read_file",)),
        ("schema", ("search",)),
        ("name", ("mcp__disk__write_file", "disk__write_file")),
    ]
    assert all(f.severity == "error" for f in loaded.findings)
    assert "rename it, e.g. to 'read_file'" in loaded.findings[0].fix


def test_unreadable_line_is_a_finding(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    path.write_text('{"name": "a", "description": "Add two numbers together now."}\n[1]\n{oops\n')
    loaded = load_lenient(path)
    assert [t.name for t in loaded.tools] == ["a"]
    assert [f.evidence.split(":")[0] for f in loaded.findings] == ["line 2", "line 3"]


def test_similar_names_do_not_clash(make: Any) -> None:
    kept, found = dedupe([make("search", "Search."), make("search_web", "Search the web.")])
    assert len(kept) == 2 and found == []


def test_missing_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ToolSpecError, match="pass a tools.jsonl file"):
        load_lenient(tmp_path / "nope.jsonl")
