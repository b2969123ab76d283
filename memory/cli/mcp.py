"""``tooltray mcp serve``: the MCP gateway, in front of the servers of an ``mcpServers`` file.

Point an MCP client (Claude Desktop or Code, Cursor, VS Code, Zed) at this one command instead of
its twenty servers: it lists the few tools the session needs plus the meta-tools, and loads the
rest when the model asks. ``--reveal bridge`` keeps ``tools/list`` fixed between boundaries
(loaded tools are listed in the ``load_tools`` answer and called through ``call_tool``), so the
client's cached prompt prefix survives a load. Logs go to stderr (stdout is the MCP channel).
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from pathlib import Path

import click

from tooltray.memory.cli.options import DB_OPTION
from tooltray.memory.config import Settings
from tooltray.tools.errors import ConfigError


@click.group("mcp")
def mcp_group() -> None:
    """MCP integration: serve tooltray as a gateway in front of other MCP servers."""


@mcp_group.command("serve")
@click.option("--config", "config_path", required=True, help="mcpServers JSON file.")
@DB_OPTION
@click.option("--session", default=None, help="stdio session id (default: mcp-<config name>).")
@click.option("--http", default=None, metavar="HOST:PORT", help="Serve streamable HTTP instead.")
@click.option(
    "--fork",
    default=None,
    metavar="PARENT",
    help="A new stdio session starts with PARENT's loaded tools (over HTTP: /mcp?fork=PARENT).",
)
@click.option("--start-timeout", type=click.FloatRange(0.1), default=30.0, show_default=True)
@click.option("--call-timeout", type=click.FloatRange(0.1), default=120.0, show_default=True)
@click.option(
    "--reveal",
    type=click.Choice(["list", "bridge"]),
    default=None,
    help="Tools loaded mid-session: list (tools/list changes) or bridge (fixed tools/list, "
    "call_tool). Default: the config's tooltray.reveal, else list.",
)
@click.option(
    "--token",
    "tokens",
    multiple=True,
    help="A bearer token HTTP clients must send (repeatable; else gateway_tokens). Required "
    "off loopback.",
)
def serve(
    config_path: str,
    db: str | None,
    session: str | None,
    http: str | None,
    fork: str | None,
    start_timeout: float,
    call_timeout: float,
    reveal: str | None,
    tokens: tuple[str, ...],
) -> None:
    """Serve the gateway (stdio unless --http); one session per client, kept in the store."""
    try:
        from tooltray.memory.gateway import load_config, parse_listen, run_gateway
    except ImportError as exc:
        raise ConfigError(
            f"tooltray mcp serve needs the MCP SDK ({exc.name} is missing): "
            "pip install 'tooltray[mcp]'."
        ) from exc
    from tooltray.memory.store.access import require_writable
    from tooltray.memory.store.url import resolve_url
    from tooltray.memory.store.versions import checked_probe

    config = load_config(config_path)
    if reveal is not None:
        config = dataclasses.replace(config, reveal="bridge" if reveal == "bridge" else "list")
    if http is not None:
        parse_listen(http)
    if http is not None and session is not None:
        raise ConfigError(
            "--session is for stdio; over --http name it in the URL: /mcp?session=ID."
        )
    if http is not None and fork is not None:
        raise ConfigError("--fork is for stdio; over --http name it in the URL: /mcp?fork=ID.")
    _logging()
    given: dict[str, object] = {"db": db} if db else {}
    if tokens:
        given["gateway_tokens"] = list(tokens)
    settings = Settings(**given)
    url = resolve_url(settings.db)
    checked_probe(url)  # a damaged or foreign store is refused before any server starts
    require_writable(url)
    session_id = session or f"mcp-{Path(config_path).stem}"
    run_gateway(
        config,
        settings,
        session=session_id,
        http=http,
        fork=fork,
        start_timeout=start_timeout,
        call_timeout=call_timeout,
    )


@mcp_group.command("accept")
@click.argument("tools", nargs=-1, metavar="[SERVER/TOOL...]")
@DB_OPTION
def accept(tools: tuple[str, ...], db: str | None) -> None:
    """Accept upstream tools held back because their description or schema changed
    (all of them without arguments); the gateway serves them from its next start."""
    from tooltray.memory.gateway.state import GatewayState, state_path
    from tooltray.memory.store.probe import no_database
    from tooltray.memory.store.url import resolve_url
    from tooltray.memory.store.versions import checked_probe

    settings = Settings(db=db) if db else Settings()
    path, url = state_path(settings), resolve_url(settings.db)
    if checked_probe(url).kind == "empty":  # the gateway's store: a typo is no "none held"
        raise no_database(url)
    state = GatewayState(path)
    wanted = list(tools) or sorted(state.pending)
    unknown = [t for t in wanted if t not in state.pending]
    if unknown:
        held = ", ".join(sorted(state.pending)) or "none"
        raise ConfigError(f"{unknown[0]!r} is not held back; held back now: {held}.")
    for key in wanted:
        state.put("tools", key, state.pending[key])
        state.drop("pending", key)
    if wanted:  # nothing accepted: no file written
        state.save()
    for key in wanted:
        click.echo(f"accepted {key}")
    if not wanted:
        click.echo("no tool is held back.")


def _logging() -> None:
    """One line per event on stderr, never on stdout (the stdio MCP channel)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger = logging.getLogger("tooltray")  # the gateway logs under tooltray.gateway
    logger.setLevel(logging.INFO)
    if not logger.handlers:
        logger.addHandler(handler)
    logger.propagate = False


COMMANDS: list[click.Command] = [mcp_group]
