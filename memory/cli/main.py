"""The ``tooltray`` command line: one click group; each command group lives in its own module.

Every command that reads the store takes ``--db URL`` (else ``TOOLTRAY_DB``, else ``db`` in
``tooltray.toml``, else ``./tooltray.db``); commands that print rows take ``--format json|csv``
for machines. Errors exit non-zero with one line (:mod:`tooltray.memory.cli.failure`).

Command modules are imported only when their command runs: ``tooltray --help`` lists them from
:data:`COMMANDS` without importing any, so start-up stays fast (the agent loop, the embedders and
onnxruntime load only for the commands that need them).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

COMMANDS: dict[str, tuple[str, str]] = {
    # command name: (module in tooltray.memory.cli exposing COMMANDS, short help for --help)
    "catalog": ("catalog", "Inspect a tool catalog: its tools, bundles and token cost."),
    "chat": ("chat", "Chat with a model; tooltray picks, loads and keeps its tools."),
    "db": ("db", "Create, upgrade and inspect the tooltray database schema."),
    "demo": ("demo", "Replay the scripted demo session through the real trinket."),
    "eval": ("eval", "Measure tooltray from what it stored."),
    "report": ("report", "Draw a session as a picture: tools loaded, used and escaped."),
    "mcp": ("mcp", "Serve tooltray as an MCP gateway in front of other MCP servers."),
    "history": ("db", "Show a session's timeline turn by turn."),
    "sql": ("db", "Run one read-only SQL statement on the store."),
    "sessions": ("inspect", "List the stored sessions."),
    "show": ("inspect", "Show a session's loaded tools, bundle menu and prompt prefix."),
    "explain": ("inspect", "What a message would load and why (a dry run)."),
    "fork": ("fork", "Start a session from another's loaded tools (a subagent)."),
    "hint": ("hint", "Send the user's text to a running HTTP gateway's session."),
}


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command runs.

    It is also the CLI's one error boundary (:mod:`tooltray.memory.cli.failure`): a usage
    error, a TooltrayError, an OS error or Ctrl-C ends as one line on stderr and a non-zero exit,
    never a traceback.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return self.commands.get(cmd_name)
        module = importlib.import_module(f"tooltray.memory.cli.{COMMANDS[cmd_name][0]}")
        for command in module.COMMANDS:
            self.add_command(command)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def main(self, *args: Any, **kwargs: Any) -> Any:  # noqa: D102 (click's signature)
        kwargs["standalone_mode"] = False
        try:
            value = super().main(*args, **kwargs)
        except BaseException as exc:
            from tooltray.memory.cli.failure import failure  # only when something failed

            failed = failure(exc)
            if failed is None:
                raise
            line, code = failed
            if line:
                click.echo(line, err=True)
            sys.exit(code)
        sys.exit(value if isinstance(value, int) else 0)


LOG_LEVELS = ("debug", "info", "warning", "error")


@click.group(cls=LazyGroup)
@click.version_option(package_name="tooltray")
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS, case_sensitive=False),
    default=None,
    help="Log tooltray's decisions and faults on stderr at this level.",
)
@click.option("-v", "--verbose", is_flag=True, help="The same as --log-level info.")
def cli(log_level: str | None, verbose: bool) -> None:
    """tooltray: a working memory for an LLM agent's tools."""
    level = log_level or ("info" if verbose else None)
    if level is not None:
        set_log_level(level)


def set_log_level(level: str) -> None:
    """Send the ``tooltray`` logger's records to stderr at ``level`` (others stay quiet).

    Without the switch only warnings reach stderr, as before: an outage is logged once, and a
    user asking why a tool loaded wants the info lines without every library's debug noise.
    """
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("tooltray")
    logger.addHandler(handler)
    logger.setLevel(level.upper())


def main() -> None:
    """Console-script entry point."""
    cli()
