"""`tooltray catalog lint` through the real click group: formats, --fail-on exit codes, errors."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tooltray.memory.cli.main import cli

WARN_ONLY = [
    {"name": "add", "description": "Adds numbers.", "group": "math"},
    {"name": "multiply", "description": "Multiply two numbers and return the product."},
]


def _lint(path: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["catalog", "lint", "--catalog", str(path), *args])


@pytest.fixture
def warn_only(tmp_path: Path, write: Any) -> Path:
    path: Path = write(tmp_path / "tools.jsonl", WARN_ONLY)
    return path


@pytest.fixture
def broken(tmp_path: Path, write: Any) -> Path:
    path: Path = write(tmp_path / "bad.jsonl", [{"name": "bad name", "description": ""}])
    return path


def test_json_rows(warn_only: Path) -> None:
    result = _lint(warn_only, "--no-embed", "--format", "json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert row == {
        "kind": "description",
        "severity": "warning",
        "tools": "add",
        "evidence": "very short (2 words): 'Adds numbers.'",
        "fix": row["fix"],
    }


def test_csv_and_table(broken: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(_lint(broken, "--no-embed", "--format", "csv").output)))
    pairs = [(r["kind"], r["severity"]) for r in rows]
    assert pairs == [("name", "error"), ("description", "error")]
    table = _lint(broken, "--no-embed")
    assert "2 findings over 1 tools" in table.output and "bad_name" in table.output


def test_fail_on_exit_codes(warn_only: Path, broken: Path) -> None:
    assert _lint(warn_only, "--no-embed", "--fail-on", "warning").exit_code == 1
    assert _lint(warn_only, "--no-embed", "--fail-on", "error").exit_code == 0
    assert _lint(broken, "--no-embed", "--fail-on", "error").exit_code == 1
    assert _lint(broken, "--no-embed").exit_code == 0  # findings alone never fail


def test_clean_catalog_says_so(tmp_path: Path, write: Any) -> None:
    row = {"name": "multiply", "description": "Multiply two numbers and return the product."}
    result = _lint(write(tmp_path / "t.jsonl", [row]), "--no-embed", "--fail-on", "warning")
    assert result.exit_code == 0 and "No findings over 1 tools." in result.output


def test_bad_input_is_one_line(warn_only: Path, tmp_path: Path) -> None:
    both = _lint(warn_only, "--mcp", "python server.py")
    assert both.exit_code == 2 and "Give --catalog FILE or --mcp CMD, not both." in both.output
    missing = _lint(tmp_path / "none.jsonl")
    assert missing.exit_code == 2 and missing.output.count("\n") == 1


def test_demo_catalog_with_the_embedder_cached_in_the_default_store(tmp_path: Path) -> None:
    """Without --db the vectors go to the default store, and a second run reads them back."""
    import sqlite3

    from tooltray.memory.embedders.base import clear_memo
    from tooltray.tools.demo import load_demo_catalog

    clear_memo()  # vectors another test left in this process's memo would never reach the store
    env = {"TOOLTRAY_DB": f"sqlite:///{tmp_path / 'default.db'}"}
    result = CliRunner().invoke(cli, ["catalog", "lint", "--format", "json"], env=env)
    assert result.exit_code == 0, result.output
    kinds = {row["kind"] for row in json.loads(result.output)}
    assert kinds <= {"near-duplicate", "boilerplate", "description", "parameter", "schema-size"}
    with sqlite3.connect(tmp_path / "default.db") as db:
        (cached,) = db.execute("SELECT COUNT(*) FROM embeddings").fetchone()
    assert cached == len(load_demo_catalog()[0])
    again = CliRunner().invoke(cli, ["catalog", "lint", "--format", "json"], env=env)
    assert again.exit_code == 0 and again.output == result.output


def test_an_unreadable_line_fails_the_run(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = {"name": "multiply", "description": "Multiply two numbers and return the product."}
    path.write_text(json.dumps(good) + "\n{not json\n", encoding="utf-8")
    result = _lint(path, "--no-embed", "--format", "csv")
    assert result.exit_code == 1
    assert "line 2: not valid JSON" in result.output


def test_mcp_server_tools() -> None:
    server = Path(__file__).parents[1] / "agent" / "mcp_server.py"
    command = f"{sys.executable} {server}"
    result = CliRunner().invoke(
        cli, ["catalog", "lint", "--mcp", command, "--no-embed", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    assert isinstance(json.loads(result.output), list)


def test_a_terminal_sees_a_progress_bar_while_tools_embed(tmp_path: Path, write: Any) -> None:
    rows = [
        {"name": f"tool_{i}", "description": f"Do thing number {i} with the files."}
        for i in range(4)
    ]
    path = write(tmp_path / "t.jsonl", rows)
    env = {"TTY_COMPATIBLE": "1", "TOOLTRAY_DB": f"sqlite:///{tmp_path / 'cache.db'}"}
    result = CliRunner().invoke(cli, ["catalog", "lint", "--catalog", str(path)], env=env)
    assert result.exit_code == 0, result.output
    assert "embedding 4 tools" in result.stderr
    piped = CliRunner().invoke(
        cli, ["catalog", "lint", "--catalog", str(path)], env={**env, "TTY_COMPATIBLE": "0"}
    )
    assert "embedding" not in piped.stderr


def _array_files(tmp_path: Path) -> list[Path]:
    """The same two tools as an OpenAI ``tools=`` array and an MCP ``tools/list`` result."""
    rows = [
        ("get_weather", "Get the current weather forecast for a city.", {"city": "string"}),
        ("get_weather_alerts", "List severe weather warnings for a region.", {"region": "string"}),
    ]

    def schema(props: dict[str, str]) -> dict[str, Any]:
        return {"type": "object", "properties": {k: {"type": v} for k, v in props.items()}}

    openai = [
        {"type": "function", "function": {"name": n, "description": d, "parameters": schema(p)}}
        for n, d, p in rows
    ]
    mcp = {"tools": [{"name": n, "description": d, "inputSchema": schema(p)} for n, d, p in rows]}
    files = [tmp_path / "openai.json", tmp_path / "mcp.json"]
    for file, data in zip(files, (openai, mcp), strict=True):
        file.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return files


def test_lint_reads_the_tool_arrays_from_catalog_reads(tmp_path: Path) -> None:
    """An OpenAI array and an MCP tools/list file are linted as their tools, not per line."""
    from tooltray.memory.lint import load_lenient
    from tooltray.tools.importers.catalog import read_catalog

    for file in _array_files(tmp_path):
        loaded = load_lenient(file)
        assert [t.name for t in loaded.tools] == ["get_weather", "get_weather_alerts"], file
        assert loaded.findings == []
        inferred = read_catalog(file).bundles  # the same bundles from_catalog infers
        assert [b.members for b in loaded.bundles] == [b.members for b in inferred]
        assert [b.name for b in loaded.bundles] == ["weather"]
        result = _lint(file, "--no-embed", "--fail-on", "error")
        assert result.exit_code == 0, result.output
        assert "over 2 tools" in result.output and "JSON" not in result.output


def test_a_refused_array_item_is_a_finding(tmp_path: Path) -> None:
    good = {"name": "get_time", "description": "Get the current local time in a time zone."}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"tools": [{"inputSchema": {}}, {**good, "inputSchema": {}}]}))
    from tooltray.memory.lint import load_lenient

    loaded = load_lenient(path)
    assert [t.name for t in loaded.tools] == ["get_time"]
    assert [f.evidence.split(":")[0] for f in loaded.findings] == ["item 0"]
