"""``tooltray sessions``, ``tooltray show SESSION`` and ``tooltray explain "MESSAGE"``.

See what tooltray holds and why without SQL: the stored sessions; one session's loaded tools
(with why each loaded, its score and last use), its bundle menu and the prompt prefix it would
send now; and what a message would load on a session, as a dry run that writes nothing (see
:mod:`tooltray.memory.cli.dryrun`). They are clients: they read the store through its protocol
and ask the planner, never the database tables directly.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

import click

from tooltray.memory.cli.db import emit, store_url
from tooltray.memory.cli.options import DB_OPTION, format_option

if TYPE_CHECKING:
    from tooltray.memory.cli.dryrun import DryStore
    from tooltray.memory.config import Settings
    from tooltray.memory.store.records import LoadedTool
    from tooltray.tools.registry import ToolRegistry

CATALOG_OPTION = click.option(
    "--catalog",
    "catalog",
    default=None,
    metavar="FILE",
    help="The agent's tools: tools.jsonl or a .py with build_registry() (default: the demo's).",
)
LOADED_COLUMNS = ["position", "tool", "source", "score", "loaded_turn", "last_used_turn"]
LOADED_COLUMNS += ["fallback", "shown"]


def open_store(db: str | None) -> DryStore:
    """The store at ``--db`` behind a view that writes nothing; a missing one is refused."""
    from tooltray.memory.cli.dryrun import DryStore
    from tooltray.memory.store import Store
    from tooltray.memory.store.probe import no_database, probe

    url = store_url(db)
    if probe(url).kind == "empty":
        raise no_database(url)
    return DryStore(Store(url))


def settings_for(db: str | None, catalog: str | None) -> Settings:
    """The settings the agent runs with; the demo catalog brings the demo's skills folder."""
    from tooltray.memory.config import Settings
    from tooltray.tools.demo import demo_skills_dir

    settings = Settings(db=store_url(db), embed_catalog="wait")  # scores shown are dense
    if catalog is None and settings.skills_dir is None:
        settings = settings.model_copy(update={"skills_dir": demo_skills_dir()})
    return settings


def known_session(store: DryStore, session: str) -> None:
    """Refuse a session the store does not hold, naming how to list them."""
    from tooltray.tools.errors import StoreError, shown

    if store.snapshot(session) is None:
        raise StoreError(
            f"no session {shown(session)} in this store: list them with `tooltray sessions`"
        )


@click.command("sessions")
@DB_OPTION
@format_option()
def sessions_command(db: str | None, fmt: str) -> None:
    """List the stored sessions, most recently updated first."""
    store = open_store(db)
    try:
        rows = [
            [s.session_id, s.turn, s.status, s.loaded_count, s.created_at, s.updated_at]
            for s in store.sessions()
        ]
    finally:
        store.close()
    columns = ["session", "turns", "status", "loaded", "created_at", "updated_at"]
    emit(columns, rows, fmt, title="sessions")


def _loaded_rows(
    tools: tuple[LoadedTool, ...] | list[LoadedTool], revealed: set[str]
) -> list[list[Any]]:
    """One row per loaded tool; ``shown`` says whether the model sees it in the prompt prefix or
    revealed at the end of the context (``reveal = "append"``, since the last boundary)."""
    return [
        [t.position, t.name, t.source, _round(t.score), t.loaded_turn, t.last_used_turn, t.fallback]
        + ["revealed" if t.name in revealed else "prefix"]
        for t in tools
    ]


def _round(score: float | None) -> float | None:
    return None if score is None else round(score, 3)


@click.command("show")
@click.argument("session")
@DB_OPTION
@CATALOG_OPTION
@format_option("table: the loaded tools, then the menu and prefix; csv: the loaded tools only.")
def show_command(session: str, db: str | None, catalog: str | None, fmt: str) -> None:
    """A session's loaded tools (source, score, last use), its bundle menu and prompt prefix."""
    from tooltray.memory.cli.chat import load_registry
    from tooltray.memory.cli.dryrun import dry_planner, session_state
    from tooltray.memory.core.trinket import selected_view

    store = open_store(db)
    try:
        known_session(store, session)
        state = session_state(store, session)
        planner = dry_planner(load_registry(catalog), settings_for(db, catalog), store)
        view = selected_view(state.snapshot, planner.settings, planner.registry, planner)
        menu = planner.menu_for(state.snapshot.meta)[0] if state.selection_mode != "all" else ""
    finally:
        store.close()
    rows = _loaded_rows(state.snapshot.loaded, {s.name for s in view.revealed})
    if fmt == "json":
        shown = {"session": session, "turn": state.turn, "status": state.snapshot.status}
        shown |= {"loaded": [dict(zip(LOADED_COLUMNS, r, strict=True)) for r in rows]}
        shown |= {"menu": menu, "prefix": view.system_prefix, "prefix_hash": view.prefix_hash}
        shown |= {"tool_tokens": view.tool_tokens, "eager_tokens": view.eager_tokens}
        click.echo(json.dumps(shown, indent=2, default=str, ensure_ascii=False))
        return
    emit(LOADED_COLUMNS, rows, fmt, title=f"session {session}: loaded tools at turn {state.turn}")
    if fmt == "table":
        click.echo(
            f"\nprompt prefix ({view.prefix_hash[:12]}; tools {view.tool_tokens} of "
            f"{view.eager_tokens} eager tokens):\n{view.system_prefix}"
        )


def embed_now(planner: Any) -> None:
    """Build the planner's index now, with a bar on a terminal while the catalog is embedded
    (vectors come from the store and the machine's vector file first)."""
    from tooltray.memory.cli.progress import embedding_bar

    with embedding_bar(f"embedding {len(planner.registry.allowed())} tools") as progress:
        planner.selector(progress)


@click.command("explain")
@click.argument("message")
@click.option("--session", "session", default=None, help="Explain the message on this session.")
@DB_OPTION
@CATALOG_OPTION
@click.option(
    "--sanitize", is_flag=True, help="Map invalid tool names in --catalog to '_', not fail."
)
@format_option()
def explain_command(
    message: str,
    session: str | None,
    db: str | None,
    catalog: str | None,
    sanitize: bool,
    fmt: str,
) -> None:
    """What MESSAGE would load (a dry run: nothing is written), with every score and the bar.

    Without --session, or on a session that has not selected yet, it is a session start; on a
    selected session it is the growth of its next turn (earlier messages are not stored, so
    MESSAGE alone is scored).
    """
    from tooltray.memory.cli.dryrun import Explained, dry_planner, explain, session_state
    from tooltray.tools.errors import ConfigError

    if not message.strip():
        raise ConfigError(
            'MESSAGE is empty: give the user message to explain, e.g. "book a flight"'
        )
    registry, inferred = _explained_registry(catalog, sanitize)
    store = _explain_store(db, session)
    try:
        if session is not None:
            known_session(store, session)
        state = session_state(store, session)
        planner = dry_planner(registry, settings_for(db, catalog), store)
        embed_now(planner)
        phase, rows = explain(planner, state, message)
    finally:
        store.close()
    if inferred:
        click.echo(
            f"note: {catalog} has no groups; its bundles were inferred from the tool names "
            "(give each tool a 'group' in a tools.jsonl file to choose them)",
            err=True,
        )
    columns = [f.name for f in dataclasses.fields(Explained)]
    records = [list(dataclasses.asdict(r).values()) for r in rows]
    title = {"start": "session start", "growth": "next turn's growth", "all": "every tool fits"}
    emit(columns, records, fmt, title=f"{title[phase]}: {message[:80]}")


def _explain_store(db: str | None, session: str | None) -> DryStore:
    """The store to explain on. In a folder without the default database (a first try) and
    without ``--session``, a fresh in-memory store: no session history and no learned signals,
    which the note says. A database named (``--db``, ``TOOLTRAY_DB``, the TOML) and missing is a
    typo and is refused, as is a session asked for where there is none."""
    from pathlib import Path

    from tooltray.memory.cli.dryrun import DryStore
    from tooltray.memory.store import Store
    from tooltray.memory.store.probe import display_url, probe
    from tooltray.memory.store.url import DEFAULT_FILE, resolve_url

    url = store_url(db)
    default = url == resolve_url(str(Path.cwd() / DEFAULT_FILE))
    if session is not None or not default or probe(url).kind != "empty":
        return open_store(db)
    click.echo(
        f"note: no tooltray database at {display_url(url)}: explaining on a fresh in-memory "
        "store (no session history, nothing learned); `tooltray demo` or `tooltray db upgrade` "
        "makes one",
        err=True,
    )
    return DryStore(Store("sqlite://"))


def _explained_registry(catalog: str | None, sanitize: bool) -> tuple[ToolRegistry, bool]:
    """The agent's tools, and whether their bundles were inferred from the names (a catalog
    file without groups: an OpenAI or MCP array), which explain states."""
    from tooltray.memory.cli.chat import load_registry
    from tooltray.tools.importers.catalog import read_catalog
    from tooltray.tools.registry import ToolRegistry

    if catalog is None or catalog.endswith(".py"):
        return load_registry(catalog, sanitize), False
    read = read_catalog(catalog, sanitize=sanitize)
    return ToolRegistry(read.tools, bundles=read.bundles), read.inferred


COMMANDS: list[click.Command] = [sessions_command, show_command, explain_command]
