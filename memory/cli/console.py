"""Where the CLI prints tables: the terminal's width in a terminal, no width limit outside one.

Outside a terminal (a pipe, a file, ``subprocess`` capture) rich falls back to 80 columns and
folds cells, which splits tool names (``math_evalu`` / ``ate``) and breaks ``grep`` and ``awk``.
There each table is printed at its natural width instead, one row per line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

PIPE_WIDTH = 100_000


def table_console() -> Console:
    """A console for tables: wrapped to the terminal in one, never wrapped outside one."""
    from rich.console import Console

    console = Console()
    if console.is_terminal:
        return console
    return Console(width=PIPE_WIDTH, soft_wrap=True)


def print_table(table: Table) -> None:
    """Print ``table`` on :func:`table_console`."""
    table_console().print(table)
