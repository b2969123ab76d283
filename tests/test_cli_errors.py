"""Every CLI command, on bad input, exits non-zero with one line and never a traceback.

The commands are enumerated from the click group, so a new command is covered the day it is
added: each gets a database in a folder that does not exist, a catalog that is not UTF-8, an
empty catalog, and bad values for its arguments against a real store.
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from cli_tree import command_of, leaves
from click.testing import CliRunner

from tooltray.memory.cli.main import cli

BAD_ARGUMENTS = {"query": "DELETE FROM sessions", "session": "no-such-session", "message": " "}
REQUIRED = {
    "base_url": "http://127.0.0.1:9/v1",
    "model": "m",
    "before": "2020-01-01",
    "config_path": "servers.json",
}


def bad_inputs(command: click.Command, tmp: Path) -> list[list[str]]:
    """Argument lists, each with one kind of bad input this command accepts."""
    base: list[str] = []
    arguments = any(isinstance(p, click.Argument) for p in command.params)
    names = {p.name for p in command.params}
    for param in command.params:
        if isinstance(param, click.Argument):
            base.append(BAD_ARGUMENTS.get(str(param.name), "no-such-thing"))
        elif param.required and param.name in REQUIRED:
            base += [param.opts[0], REQUIRED[str(param.name)]]
    store = f"sqlite:///{tmp / 'real.db'}"
    variants = [[*base, "--db", str(tmp / "missing" / "x.db")]] if "db" in names else []
    if "catalog" in names:
        latin = tmp / "latin.jsonl"
        latin.write_bytes(b'{"name": "caf\xe9"}\n\xff\xfe')
        empty = tmp / "empty.jsonl"
        empty.write_text("\n", encoding="utf-8")
        variants += [[*base, "--catalog", str(latin)], [*base, "--catalog", str(empty)]]
    if arguments and "db" in names:
        variants.append([*base, "--db", store])
    return variants


ALL = sorted(leaves(cli))


def test_every_command_is_enumerated() -> None:
    assert {"sql", "history", "db", "catalog", "chat", "demo", "eval"} <= {p[0] for p in ALL}


@pytest.mark.parametrize("path", ALL, ids=[" ".join(p) for p in ALL])
def test_bad_input_is_one_line_and_no_traceback(path: tuple[str, ...], tmp_path: Path) -> None:
    runner = CliRunner()
    runner.invoke(cli, ["db", "upgrade", "--db", f"sqlite:///{tmp_path / 'real.db'}"])
    variants = bad_inputs(command_of(path), tmp_path)
    if not variants:
        pytest.skip(f"{' '.join(path)} takes no input to get wrong")
    for args in variants:
        result = runner.invoke(cli, [*path, *args])
        shown = f"tooltray {' '.join([*path, *args])}:\n{result.output}"
        assert result.exit_code != 0, shown
        assert "Traceback" not in result.output, shown
        assert result.exception is None or isinstance(result.exception, SystemExit), shown
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1, shown


@pytest.mark.parametrize("args", [["db", "upgrade"], ["db", "current"], ["sql", "SELECT 1"]])
def test_a_database_folder_that_does_not_exist_is_named(args: list[str], tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    result = CliRunner().invoke(cli, [*args, "--db", str(missing / "x.db")])
    assert result.exit_code == 2
    assert "damaged" not in result.output
    assert str(missing) in result.output and (
        "does not exist" in result.output or "no database" in result.output
    )
