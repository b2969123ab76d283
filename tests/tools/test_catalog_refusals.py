"""The catalog reader refuses what it used to take or crash on, with one line naming the line and
the fix (issue 33): a line nested past the JSON reader's depth (a RecursionError and 52 lines of
traceback from ``tooltray catalog show``), ``parameters`` of ``0``, ``[]`` or ``null``, an invalid
``additionalProperties``, and a tool named like a meta-tool.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tooltray.memory.metatools.meta_tools import CALL_TOOL, META_TOOL_NAMES
from tooltray.tools.errors import ToolSpecError
from tooltray.tools.importers.catalog import read_catalog
from tooltray.tools.names import META_NAMES

GOOD = '{"name": "get_weather", "description": "Weather for a city.", "parameters": {}}'
DEEP = '{"properties": ' * 5000 + "{}" + "}" * 5000
BAD = {
    "deep": (f'{{"name": "a", "description": "d", "parameters": {DEEP}}}', "nested deeper"),
    "zero": ('{"name": "a", "description": "d", "parameters": 0}', "got 0; write {}"),
    "list": ('{"name": "a", "description": "d", "parameters": []}', r"got \[\]; write {}"),
    "null": ('{"name": "a", "description": "d", "parameters": null}', "got null; write {}"),
    "additional": (
        '{"name": "a", "description": "d", "parameters": {"additionalProperties": 5}}',
        "additionalProperties must be true, false or a schema",
    ),
    "nested additional": (
        '{"name": "a", "description": "d", "parameters": {"properties": {"x": '
        '{"type": "object", "additionalProperties": "yes"}}}}',
        r"parameters.properties.x.additionalProperties must be",
    ),
    "meta name": ('{"name": "load_tools", "description": "d"}', "name of a tooltray meta-tool"),
    "bridge name": ('{"name": "call_tool", "description": "d"}', "name of a tooltray meta-tool"),
}


def _catalog(tmp_path: Path, line: str) -> Path:
    path = tmp_path / "tools.jsonl"
    path.write_text(f"{GOOD}\n{line}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("case", sorted(BAD))
def test_the_reader_refuses_with_the_line_and_the_fix(tmp_path: Path, case: str) -> None:
    line, message = BAD[case]
    with pytest.raises(ToolSpecError, match=message) as info:
        read_catalog(_catalog(tmp_path, line))
    assert "tools.jsonl line 2" in str(info.value)


def test_catalog_show_says_one_line_for_a_deep_line(tmp_path: Path) -> None:
    path = _catalog(tmp_path, BAD["deep"][0])
    code = "from tooltray.memory.cli.main import cli; cli()"
    done = subprocess.run(
        [sys.executable, "-c", code, "catalog", "show", "--catalog", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        f"error: {path} line 2: nested deeper than the JSON reader allows (about "
        f"{sys.getrecursionlimit():,} levels); flatten the schema, e.g. move repeated parts "
        "into $defs."
    ]


def test_what_still_means_no_arguments(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    path.write_text(
        '{"name": "a", "description": "d"}\n'
        '{"name": "b", "description": "d", "parameters": {}}\n'
        '{"name": "c", "description": "d", "parameters": {"additionalProperties": false}}\n'
        '{"name": "d", "description": "d", "parameters": {"additionalProperties": '
        '{"type": "string"}}}\n',
        encoding="utf-8",
    )
    assert [t.name for t in read_catalog(path).tools] == ["a", "b", "c", "d"]


def test_the_reserved_names_are_the_meta_tools() -> None:
    assert frozenset({*META_TOOL_NAMES, CALL_TOOL}) == META_NAMES
