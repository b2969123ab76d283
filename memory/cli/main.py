"""The ``tooltray`` command line: one click group; each command group lives in its own module.

Every command takes ``--db URL`` (else ``TOOLTRAY_DB``, else ``./tooltray.db``) and prints a
readable table by default, ``--format json|csv`` for machines. Errors exit non-zero with one line.
"""

from __future__ import annotations

import importlib
import sys

import click

from tooltray.tools.errors import TooltrayError

COMMAND_MODULES: tuple[str, ...] = (
    # each module exposes COMMANDS: list[click.Command]; add one line per module
    "catalog",
    "chat",
    "db",
    "demo",
    "eval",
    "mcp",
)


class _Group(click.Group):
    """A group that turns any TooltrayError into one clear line and exit code 2."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except TooltrayError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=_Group)
@click.version_option(package_name="tooltray")
def cli() -> None:
    """tooltray: a working memory for an LLM agent's tools."""


def _register() -> None:
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"tooltray.memory.cli.{name}")
        for command in module.COMMANDS:
            cli.add_command(command)


_register()


def main() -> None:
    """Console-script entry point."""
    cli()
