"""``tooltray catalog show|tokens|lint``: look at a tool catalog, what it costs, what hurts it.

Without ``--catalog`` the commands use the bundled demo catalog. No database is involved, except
``lint --db`` as an optional cache of document embeddings.
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
ENCODINGS = ("o200k_base", "cl100k_base")  # tooltray.tools.render's (tested)


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
    from tooltray.tools.render import tokens_per_tool

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
    from tooltray.tools.render import block_tokens, is_estimated, tokens_per_tool

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


def lint_specs(catalog: str | None, mcp: Sequence[str]) -> tuple[list[ToolSpec], list[Any]]:
    """The tools to lint and the findings of loading them (strict loading's errors)."""
    from tooltray.memory.lint import load_lenient
    from tooltray.tools.errors import ConfigError

    if catalog is not None and mcp:
        raise ConfigError("Give --catalog FILE or --mcp CMD, not both.")
    if catalog is not None:
        loaded = load_lenient(catalog)
        if not loaded.tools and not loaded.findings:
            raise ConfigError(
                f"Catalog {catalog} has no tools: write one JSON object a line "
                '({"name", "description", "parameters", "group"}).'
            )
        return loaded.tools, list(loaded.findings)
    if not mcp:
        return load_specs(None, False)[0], []
    from tooltray.tools.sources.mcp import MCPSource

    tools: list[ToolSpec] = []
    for command in mcp:
        with MCPSource(command) as source:
            tools += source.specs
    return tools, []


def lint_embedder(db: str | None) -> Any:
    """The default embedder, its document vectors cached in the store at ``db`` (default: the
    default store, ``TOOLTRAY_DB`` or ``./tooltray.db``, which the demo and the agent fill) and
    in the machine's vector file (``TOOLTRAY_CACHE``), which ``explain``, ``show`` and the
    gateway share.

    Without the cache every run embedded the whole catalog again. A default store that cannot
    be opened costs only its part: lint goes on and says why in one line (a ``--db`` given and
    unusable is an error, as on every command).
    """
    from tooltray.memory.cli.db import store_url
    from tooltray.memory.embedders import CachedEmbedder, default_embedder
    from tooltray.memory.embedders.filecache import shared
    from tooltray.memory.store import Store
    from tooltray.tools.errors import StoreError

    store = None
    try:
        store = Store(store_url(db), auto_upgrade=True)
    except StoreError as exc:
        if db is not None:
            raise
        click.echo(f"note: no embedding cache in the default store ({exc})", err=True)
    cache = shared(store)
    return CachedEmbedder(default_embedder(), cache) if cache is not None else default_embedder()


def embed_with_progress(tools: Sequence[ToolSpec], embedder: Any) -> None:
    """Embed the tools' documents first, with a progress bar in a terminal (the lint then reads
    them from the cache's memo); outside one, nothing is drawn."""
    from tooltray.memory.cli.progress import embedding_bar
    from tooltray.memory.retrieval.scoring import doc_text

    if not hasattr(embedder, "embed_documents"):
        return
    with embedding_bar(f"embedding {len(tools)} tools") as progress:
        if progress is not None:
            embedder.embed_documents([doc_text(spec) for spec in tools], progress)


@catalog_group.command("lint")
@_catalog_opt
@click.option("--mcp", "mcp", multiple=True, help="MCP server command (repeatable).")
@click.option(
    "--db",
    "db",
    default=None,
    help="Store caching document embeddings (default: $TOOLTRAY_DB, else ./tooltray.db).",
)
@click.option("--no-embed", is_flag=True, help="Skip the near-duplicate check (no embedder).")
@click.option("--fail-on", "fail_on", type=click.Choice(("warning", "error")), default=None)
@_format_opt
def lint(
    catalog: str | None,
    mcp: tuple[str, ...],
    db: str | None,
    no_embed: bool,
    fail_on: str | None,
    fmt: str,
) -> None:
    """One row per finding: kind, severity, tools, evidence, what to do.

    Exits 1 when a finding reaches --fail-on (warning or error) or a line is not a JSON object
    (strict loading would refuse the file), else 0. Document vectors are cached in the machine's
    vector file (and --db), so a second run does not embed the catalog again.
    """
    from tooltray.memory.lint import Severity, ordered, reaches
    from tooltray.memory.lint import lint as run_lint

    tools, found = lint_specs(catalog, mcp)
    embedder = None if no_embed else lint_embedder(db)
    if embedder is not None:
        embed_with_progress(tools, embedder)
    found = ordered(found + run_lint(tools, embedder))
    title = f"{len(found)} findings over {len(tools)} tools"
    if found or fmt == "json":
        emit([f.row() for f in found], fmt, title)
    elif fmt == "table":
        click.echo(f"No findings over {len(tools)} tools.")
    bar: Severity | None = "error" if fail_on == "error" else "warning" if fail_on else None
    if bar is not None and any(reaches(f.severity, bar) for f in found):
        raise SystemExit(1)
    if any(f.kind == "line" for f in found):  # a line no loader can read: the file is broken
        raise SystemExit(1)


COMMANDS: list[click.Command] = [catalog_group]
