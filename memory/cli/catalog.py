"""``tooltray catalog show|tokens``: look at a tool catalog and what it costs on each render path.

Without ``--catalog`` both commands use the bundled demo catalog. No database is involved.
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from tooltray.memory.cli.console import print_table

if TYPE_CHECKING:  # the catalog machinery loads when a command runs, not on --help
    from tooltray.tools.spec import Bundle, ToolSpec

FORMATS = ("table", "json", "csv")
RENDER_PATHS = ("text", "openai", "responses", "anthropic")  # tooltray.tools.render's (tested)
ENCODINGS = ("o200k_base", "cl100k_base")  # tooltray.tools.tokens's (tested)


def load_specs(catalog: str | None, sanitize: bool) -> tuple[list[ToolSpec], list[Bundle]]:
    """The tools of ``catalog`` (a tools.jsonl path), or of the bundled demo catalog."""
    from tooltray.tools.errors import ConfigError
    from tooltray.tools.importers.catalog import load_catalog

    loaded: tuple[list[ToolSpec], list[Bundle]]
    if catalog is not None:
        loaded = load_catalog(catalog, sanitize=sanitize)
        return loaded
    try:
        from tooltray.tools.demo import load_demo_catalog
    except ImportError as exc:
        raise ConfigError(
            "The bundled demo catalog is not available in this install; pass --catalog FILE."
        ) from exc
    loaded = load_demo_catalog()
    return loaded


def emit(rows: Sequence[dict[str, Any]], fmt: str, title: str) -> None:
    """Print ``rows`` as a rich table, JSON or CSV."""
    if fmt == "json":
        click.echo(json.dumps(list(rows), indent=2, ensure_ascii=False))
        return
    columns = list(rows[0]) if rows else []
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        click.echo(buffer.getvalue(), nl=False)
        return
    from rich.table import Table

    table = Table(title=title)
    for column in columns:
        table.add_column(column, justify="right" if isinstance(rows[0][column], int) else "left")
    for row in rows:
        table.add_row(*(str(row[c]) for c in columns))
    print_table(table)


_catalog_opt = click.option(
    "--catalog", "catalog", type=click.Path(dir_okay=False), help="tools.jsonl (default: demo)."
)
_sanitize_opt = click.option(
    "--sanitize", is_flag=True, help="Map invalid tool/group names to '_' instead of failing."
)
_format_opt = click.option("--format", "fmt", type=click.Choice(FORMATS), default="table")
_encoding_opt = click.option(
    "--encoding", type=click.Choice(ENCODINGS), default="o200k_base", show_default=True
)


@click.group("catalog")
def catalog_group() -> None:
    """Inspect a tool catalog: its tools, bundles and token cost."""


@catalog_group.command("show")
@_catalog_opt
@_sanitize_opt
@click.option(
    "--path", "path", type=click.Choice(RENDER_PATHS), default="openai", show_default=True
)
@_encoding_opt
@_format_opt
def show(catalog: str | None, sanitize: bool, path: str, encoding: str, fmt: str) -> None:
    """One row per tool: name, bundle, tokens on --path, first sentence."""
    from tooltray.tools.tokens import tokens_per_tool

    tools, _ = load_specs(catalog, sanitize)
    counts = tokens_per_tool(tools, path, encoding)
    rows = [
        {
            "name": t.name,
            "bundle": t.bundle or "",
            "tokens": counts[t.name],
            "description": t.first_sentence(),
        }
        for t in tools
    ]
    emit(rows, fmt, f"{len(rows)} tools ({path}, {encoding})")


def path_row(tools: Sequence[ToolSpec], path: str, encoding: str) -> dict[str, Any]:
    """Token statistics of ``tools`` on one render path."""
    from tooltray.tools.tokens import block_tokens, is_estimated, tokens_per_tool

    per = list(tokens_per_tool(tools, path, encoding).values())
    return {
        "path": path,
        "tools": len(tools),
        "total": block_tokens(tools, path, encoding),
        "median": statistics.median(per) if per else 0,
        "max": max(per, default=0),
        "encoding": encoding,
        "estimated": is_estimated(encoding),
    }


@catalog_group.command("tokens")
@_catalog_opt
@_sanitize_opt
@click.option(
    "--path", "path", type=click.Choice((*RENDER_PATHS, "all")), default="all", show_default=True
)
@_encoding_opt
@_format_opt
def tokens(catalog: str | None, sanitize: bool, path: str, encoding: str, fmt: str) -> None:
    """Per render path: total block tokens, per-tool median and max, tool count."""
    tools, _ = load_specs(catalog, sanitize)
    paths = RENDER_PATHS if path == "all" else (path,)
    rows = [path_row(tools, p, encoding) for p in paths]
    emit(rows, fmt, "Tool-block tokens per render path")


COMMANDS: list[click.Command] = [catalog_group]
