"""The README stays true: its two commands, its CLI table and its SQL examples all work."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from tooltray.memory.cli.main import cli

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_two_commands_for_a_fresh_machine() -> None:
    block = README.split("## Two commands on a fresh machine", 1)[1].split("```")[1]
    commands = [line.split("#")[0].strip() for line in block.splitlines()[1:] if line.strip()]
    assert commands == ["pip install -e . && tooltray demo", 'pip install -e ".[dev]" && pytest']


def test_every_command_in_the_cli_table_exists() -> None:
    table = README.split("## CLI", 1)[1].split("##", 1)[0]
    for match in re.finditer(r"`tooltray ([a-z]+)(?: ([a-z]+))?", table):
        group, sub = match.groups()
        args = [group] + ([sub] if sub and group in ("catalog", "db", "eval") else []) + ["--help"]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, (args, result.output)


def test_the_cli_table_names_every_command() -> None:
    from tooltray.memory.cli.main import COMMANDS

    table = README.split("## CLI", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"^\| `tooltray ([a-z]+)", table, flags=re.M))
    assert named == set(COMMANDS)


def test_sql_examples_run_read_only_on_a_demo_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.db'}"
    runner = CliRunner()
    demo = runner.invoke(cli, ["demo", "--db", url, "--turns", "9"])
    assert demo.exit_code == 0, demo.output
    queries = re.findall(r"```sql\n(.+?)\n```", README, flags=re.S)
    assert len(queries) == 4
    outputs = []
    for query in queries:
        result = runner.invoke(cli, ["sql", query, "--db", url, "--format", "csv"])
        assert result.exit_code == 0, (query, result.output)
        outputs.append(result.output)
    assert outputs[0].splitlines()[:2] == ["tool,uses", "calendar_create_event,1"]
    assert outputs[1].splitlines()[1].startswith("demo-1,9,")
    assert "evicted" not in outputs[2] and len(outputs[2].splitlines()) > 1
    learned = outputs[3].splitlines()
    assert learned[0] == "tool,mate,share" and len(learned) > 1
    assert all(0 < float(line.split(",")[2]) <= 1.0 for line in learned[1:])


def test_the_setting_after_one_turn_shows_selection_on_a_small_catalog() -> None:
    """The README's switch makes a newcomer's 22 tools open with a selection, not all of them,
    and the selection holds a tool the message asks for."""
    import ast

    from newcomer_tools import TOOLS

    from tooltray.memory import Settings, ToolLoaderTrinket
    from tooltray.tools import ToolRegistry

    after = README.split("### One turn", 1)[1].split("```", 2)[2]
    call = re.search(r"`(Settings\([^`]*\))`", after.split("\n\n", 2)[1])
    assert call is not None, "the paragraph after One turn's example names a Settings(...)"
    parsed = ast.parse(call.group(1), mode="eval").body
    assert isinstance(parsed, ast.Call)
    kwargs = {k.arg: ast.literal_eval(k.value) for k in parsed.keywords if k.arg}
    registry = ToolRegistry()
    for fn in TOOLS:
        registry.register_callable(fn)
    message = "It's freezing in here, warm the house up and put on some jazz"
    with ToolLoaderTrinket(registry, settings=Settings(db="sqlite://", **kwargs)) as trinket:
        view = trinket.prepare("newcomer", [{"role": "user", "content": message}])
    offered = {spec.name for spec in view.specs}
    assert "load_tools" in offered
    assert 0 < len(offered & {fn.__name__ for fn in TOOLS}) < len(TOOLS)
    assert offered & {"set_thermostat", "play_music"}
