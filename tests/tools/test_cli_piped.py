"""Tables printed into a pipe or a file keep every cell whole: one row per line, no folding."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tooltray.memory.cli.console import PIPE_WIDTH, table_console
from tooltray.memory.cli.main import cli
from tooltray.tools.demo import load_demo_catalog


def test_outside_a_terminal_the_console_does_not_wrap() -> None:
    console = table_console()  # pytest captures stdout: not a terminal
    assert not console.is_terminal and console.width == PIPE_WIDTH


def test_catalog_show_keeps_every_tool_on_one_whole_line() -> None:
    result = CliRunner().invoke(cli, ["catalog", "show"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    tools, _ = load_demo_catalog()
    rows = [line for line in result.output.splitlines() if line.startswith("│")]
    assert len(rows) == len(tools)
    for row, tool in zip(rows, tools, strict=True):
        assert row.split("│")[1].strip() == tool.name
        assert tool.first_sentence() in row


def test_sql_rows_with_long_values_stay_whole(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.db'}"
    runner = CliRunner()
    assert runner.invoke(cli, ["db", "upgrade", "--db", url]).exit_code == 0
    long = "math_evaluate_" + "x" * 300
    query = f"SELECT '{long}' AS tool, 'a second column' AS note"
    result = runner.invoke(cli, ["sql", query, "--db", url], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    [row] = [line for line in result.output.splitlines() if long in line]
    assert "a second column" in row
