"""The CLI's commands as a tree: every leaf command, and the command at a path.

Shared by the tests that drive every command (bad arguments, the fuzz suite), so a command added
to ``memory/cli/main.py``'s table is covered without touching them.
"""

from __future__ import annotations

from collections.abc import Iterator

import click

from tooltray.memory.cli.main import cli


def leaves(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            yield from leaves(command, (*prefix, name))
        else:
            yield (*prefix, name)


def command_of(path: tuple[str, ...]) -> click.Command:
    command: click.Command | None = cli
    for name in path:
        assert isinstance(command, click.Group)
        command = command.get_command(click.Context(command), name)
    assert command is not None
    return command
