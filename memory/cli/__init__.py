"""The ``tooltray`` command line: one click group, one module per command group."""

from tooltray.memory.cli.main import cli, main

__all__ = ["cli", "main"]
