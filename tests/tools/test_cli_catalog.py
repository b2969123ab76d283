"""`tooltray catalog show|tokens` through the real click group."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tooltray.memory.cli.main import cli
from tooltray.tools.importers.catalog import load_catalog
from tooltray.tools.render import RENDER_PATHS, block_tokens

MULTITURN = "/work/shared/data/bfcl_multiturn/tools.jsonl"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_show_json(runner: CliRunner, sample_path: Path) -> None:
    result = runner.invoke(
        cli, ["catalog", "show", "--catalog", str(sample_path), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [r["name"] for r in rows][:2] == ["read_file", "write_file"]
    assert rows[0]["bundle"] == "files" and rows[-1]["bundle"] == ""
    assert rows[0]["description"] == "Read a text file and return its contents."
    assert all(isinstance(r["tokens"], int) and r["tokens"] > 10 for r in rows)


def test_show_table_and_csv(runner: CliRunner, sample_path: Path) -> None:
    table = runner.invoke(cli, ["catalog", "show", "--catalog", str(sample_path), "--path", "text"])
    assert table.exit_code == 0 and "weather_alerts" in table.output and "6 tools" in table.output
    out = runner.invoke(cli, ["catalog", "show", "--catalog", str(sample_path), "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(out.output)))
    assert len(rows) == 6 and rows[3]["name"] == "get_weather"


def test_tokens_all_paths_match_library(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["catalog", "tokens", "--catalog", MULTITURN, "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {r["path"]: r for r in json.loads(result.output)}
    assert list(rows) == list(RENDER_PATHS)
    specs, _ = load_catalog(MULTITURN)
    for path, r in rows.items():
        assert r["tools"] == 130 and r["total"] == block_tokens(specs, path)
        assert r["median"] <= r["max"] < r["total"] and r["estimated"] is False


def test_tokens_one_path_other_encoding(runner: CliRunner) -> None:
    args = ["catalog", "tokens", "--catalog", MULTITURN, "--path", "text", "--format", "csv"]
    o200k = list(csv.DictReader(io.StringIO(runner.invoke(cli, args).output)))
    cl100k = list(
        csv.DictReader(io.StringIO(runner.invoke(cli, [*args, "--encoding", "cl100k_base"]).output))
    )
    assert [r["path"] for r in o200k] == ["text"] and cl100k[0]["encoding"] == "cl100k_base"
    assert o200k[0]["total"] != cl100k[0]["total"]


def test_bad_catalog_is_one_line_error(runner: CliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "tools.jsonl"
    bad.write_text('{"name": "PDF&URL", "description": "x"}\n')
    result = runner.invoke(cli, ["catalog", "tokens", "--catalog", str(bad)])
    assert result.exit_code == 2
    assert "line 1" in result.output and "--sanitize" in result.output
    ok = runner.invoke(
        cli, ["catalog", "show", "--catalog", str(bad), "--sanitize", "--format", "json"]
    )
    assert json.loads(ok.output)[0]["name"] == "PDF_URL"
