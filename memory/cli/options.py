"""Options several commands share, declared once so ``--db`` reads the same everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

DB_OPTION = click.option(
    "--db",
    "db",
    default=None,
    metavar="URL",
    help=(
        "SQLAlchemy URL or SQLite file path (default: $TOOLTRAY_DB, else db in tooltray.toml, "
        "else ./tooltray.db)."
    ),
)


def format_option(help_text: str = "Output format.") -> Callable[[F], F]:
    """``--format table|json|csv`` (default ``table``) for commands that print rows."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["table", "json", "csv"]),
        default="table",
        show_default=True,
        help=help_text,
    )
