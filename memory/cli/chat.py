"""``tooltray chat``: talk to any OpenAI-compatible model with tooltray managing its tools.

Each turn prints what is loaded (and what changed), every tool call with its (shortened) result,
and the tool tokens the model saw against exposing every tool. ``--script FILE`` replays user
messages (a JSON list, or one per line) instead of reading stdin; ``--format json`` prints one
JSON object per turn, including the messages, so a later run can continue the conversation.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import sys
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tooltray.memory.cli.options import DB_OPTION
from tooltray.tools.errors import ConfigError, DuplicateToolError, shown_path

if TYPE_CHECKING:  # the agent loop and the registry load when the command runs, not on --help
    from tooltray.memory.agent.loop import Agent, TurnResult
    from tooltray.tools.registry import ToolRegistry
    from tooltray.tools.sources.mcp import MCPSource

SHOW_CHARS = 160
QUIT = ("/quit", "/exit", "exit", "quit")


def load_registry(catalog: str | None, sanitize: bool = False) -> ToolRegistry:
    """The tools: a ``.py`` file's ``build_registry()``, a tools.jsonl file (``sanitize``: invalid
    tool names mapped onto the provider rule), or the demo catalog."""
    from tooltray.tools.registry import ToolRegistry

    if catalog is None:
        return _demo_registry()
    path = Path(catalog)
    if path.suffix != ".py":
        return ToolRegistry.from_catalog(path, sanitize=sanitize)
    spec = importlib.util.spec_from_file_location(f"tooltray_catalog_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"Cannot import catalog file {catalog!r}: is it a Python file?")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    build = getattr(module, "build_registry", None)
    if not callable(build):
        raise ConfigError(f"{catalog!r} must define build_registry() -> ToolRegistry.")
    registry = build()
    if not isinstance(registry, ToolRegistry):
        raise ConfigError(f"build_registry() in {catalog!r} returned {type(registry).__name__}.")
    return registry


def _demo_registry() -> ToolRegistry:
    from tooltray.tools.registry import ToolRegistry

    try:
        from tooltray.tools import demo
    except ImportError as exc:
        raise ConfigError("No demo catalog in this install: pass --catalog FILE.") from exc
    build = getattr(demo, "demo_registry", None)
    if callable(build):
        registry = build()
        if isinstance(registry, ToolRegistry):
            return registry
    tools, bundles = demo.load_demo_catalog()
    return ToolRegistry(tools, bundles=bundles)


def read_script(path: str) -> list[str]:
    """User messages from a JSON list of strings, or one per non-empty line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{shown_path(path)} is not UTF-8 text (byte {exc.start}): save it as UTF-8."
        ) from None
    if path.endswith(".json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{shown_path(path)} is not valid JSON ({exc.msg} at line {exc.lineno}, column "
                f"{exc.colno}): fix it; it must hold a JSON list of user messages (strings)."
            ) from None
        if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
            raise ConfigError(
                f"{shown_path(path)} must hold a JSON list of user messages (strings)."
            )
        return data
    return [line.strip() for line in text.splitlines() if line.strip()]


def _stdin_lines() -> Iterator[str]:
    """User messages from stdin; the ``you> `` prompt only on a terminal, and on stderr, so that
    ``--format json`` stays valid JSON lines when the input is piped."""
    prompt = sys.stdin.isatty()
    while True:
        if prompt:
            click.echo("you> ", nl=False, err=True)
        line = sys.stdin.readline()
        if not line:  # end of input
            return
        if line.strip() in QUIT:
            return
        if line.strip():
            yield line.strip()


def _short(text: Any, limit: int = SHOW_CHARS) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def turn_record(user: str, result: TurnResult, before: Sequence[str]) -> dict[str, Any]:
    """What one turn did, as plain data (the ``--format json`` line)."""
    after = result.loaded
    last = result.views[-1] if result.views else None
    return {
        "turn": result.turn,
        "user": user,
        "answer": result.answer,
        "finished": result.finished,
        "loaded": after,
        "added": [n for n in after if n not in before],
        "removed": [n for n in before if n not in after],
        "steps": result.steps,
        "step_tokens": result.step_tokens,
        "eager_tokens": result.eager_tokens,
        "prefix_hash": last.prefix_hash if last else None,
        "mode": last.mode if last else None,
        "calls": [
            {
                "step": c.step,
                "name": c.name,
                "tool": c.tool,
                "status": c.status,
                "arguments": c.arguments,
                "result": c.result,
            }
            for c in result.calls
        ],
        "messages": result.messages,
    }


def print_turn(record: dict[str, Any]) -> None:
    """The human-readable report of one turn."""
    echo = click.echo
    echo(f"── turn {record['turn']} ── you: {_short(record['user'])}")
    change = " ".join([*(f"+{n}" for n in record["added"]), *(f"-{n}" for n in record["removed"])])
    echo(f"  loaded ({len(record['loaded'])}): {', '.join(record['loaded']) or '-'}")
    if change:
        echo(f"  changed: {change}")
    for c in record["calls"]:
        args = json.dumps(c["arguments"], ensure_ascii=False, default=str)
        echo(f"  [step {c['step'] + 1}] {c['name']}({_short(args, 80)}) {c['status']}")
        echo(f"      -> {_short(c['result'])}")
    eager = record["eager_tokens"]
    steps = ", ".join(str(t) for t in record["step_tokens"])
    share = (
        f" ({100 * max(record['step_tokens'], default=0) / eager:.0f}% of eager)" if eager else ""
    )
    echo(f"  tool tokens per step: {steps} vs eager {eager}{share}")
    echo(f"assistant: {record['answer']}")


@contextlib.contextmanager
def _mcp_sources(
    commands: Sequence[str], registry: ToolRegistry, *, prefix: bool = False, replace: bool = False
) -> Iterator[list[MCPSource]]:
    from tooltray.tools.sources.mcp import MCPSource

    sources: list[MCPSource] = []
    try:
        for command in commands:
            source = MCPSource(command, prefix=prefix)
            sources.append(source)
            _start(source, command, registry, replace, prefix)
        yield sources
    finally:
        for source in sources:
            source.close()


def _start(
    source: MCPSource, command: str, registry: ToolRegistry, replace: bool, prefix: bool = False
) -> None:
    """Start one server and register its tools; every failure is one line that says what to do."""
    from tooltray.tools.errors import MCPSourceError

    quiet = logging.getLogger("mcp")  # the SDK logs a traceback per unparsable line
    level, quiet.level = quiet.level, logging.CRITICAL
    try:
        source.start()
    except MCPSourceError as exc:
        raise ConfigError(
            f"MCP server {command!r} did not start ({_root_cause(exc)}): check that the command "
            "runs on its own and speaks MCP over stdio, e.g. --mcp 'mcp-server-git --repository .'."
        ) from None
    finally:
        quiet.level = level
    if replace:
        _make_room(registry, [spec.name for spec in source.specs])
    elif prefix:
        source.rename(_clash_names(registry, source))
    try:
        source.register(registry)
    except DuplicateToolError as exc:
        raise ConfigError(
            f"{exc} Pass --mcp-replace to let the server's tools replace same-named ones."
        ) from None


def _clash_names(registry: ToolRegistry, source: MCPSource) -> dict[str, str]:
    """With ``--mcp-prefix``: ``<server>_<tool>`` for each server tool a registry tool still
    clashes with (the same name once an ``mcp__`` wrapper is stripped), so both stay callable.
    """
    from tooltray.tools.names import match_key

    out: dict[str, str] = {}
    for spec in source.specs:
        if any(layer.find(spec.name) for layer in (registry.catalog, registry.instance)):
            out[spec.name] = f"{source.name}_{match_key(spec.name)}"[:64]
    return out


def _make_room(registry: ToolRegistry, names: Sequence[str]) -> None:
    """Remove the tools ``names`` would clash with (also once an ``mcp__`` wrapper is stripped):
    with ``--mcp-replace`` the server's tool wins over a catalog's stand-in. This registry is
    this process's own, so its catalog layer may be edited.
    """
    for name in names:
        for layer in (registry.catalog, registry.instance):
            entry = layer.find(name)
            if entry is not None:
                layer.remove(entry.spec.name)


def _root_cause(exc: BaseException) -> str:
    """The innermost error behind ``exc``, through causes and exception groups, as one line."""
    seen: BaseException = exc
    while True:
        inner = seen.__cause__
        group = getattr(seen, "exceptions", None)  # an ExceptionGroup (Python 3.11+, anyio)
        if isinstance(group, tuple) and group and isinstance(group[0], BaseException):
            inner = group[0]
        if inner is None:
            break
        seen = inner
    text = " ".join(str(seen).split()) or type(seen).__name__
    return text[:200]


def build_agent(
    registry: ToolRegistry, db: str | None, path: str, base_url: str, model: str, **opts: Any
) -> Agent:
    """A trinket over ``registry`` and ``db``, and an agent talking to ``base_url``."""
    from openai import OpenAI

    from tooltray.memory.agent.loop import Agent
    from tooltray.memory.cli.db import store_url
    from tooltray.memory.config import Settings
    from tooltray.memory.core.trinket import ToolLoaderTrinket
    from tooltray.memory.store import Store
    from tooltray.memory.store.access import require_writable

    url = store_url(db)
    settings = Settings(db=url, path="text" if path == "text" else "openai")
    require_writable(url)
    trinket = ToolLoaderTrinket(registry, Store(url, wait=settings.store_wait), settings=settings)
    client = OpenAI(base_url=base_url, api_key=opts.pop("api_key") or "none", max_retries=1)
    return Agent(trinket, client, model, path=path, **opts)


@click.command("chat")
@click.option("--base-url", required=True, help="OpenAI-compatible server, e.g. http://host/v1.")
@click.option("--model", required=True, help="Model name sent with every request.")
@click.option("--api-key", envvar="OPENAI_API_KEY", default=None, help="Default: $OPENAI_API_KEY.")
@DB_OPTION
@click.option(
    "--catalog",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="build_registry() in a .py file, or tools.jsonl (default: demo catalog).",
)
@click.option("--mcp", "mcp_commands", multiple=True, help="MCP server command (repeatable).")
@click.option(
    "--mcp-prefix",
    is_flag=True,
    help="Name MCP tools mcp__<server>__<tool> (<server>_<tool> where a catalog tool clashes).",
)
@click.option(
    "--mcp-replace",
    is_flag=True,
    help="An MCP tool replaces a catalog tool of the same name (else the clash is an error).",
)
@click.option("--path", type=click.Choice(["openai", "text"]), default="openai", show_default=True)
@click.option("--session", default=None, help="Session id; an existing one is resumed.")
@click.option(
    "--script",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="User messages: a JSON list, or one per line.",
)
@click.option("--max-steps", type=click.IntRange(1, 64), default=8, show_default=True)
@click.option("--max-tokens", type=click.IntRange(1), default=None, help="Cap each reply.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
def chat(
    base_url: str,
    model: str,
    api_key: str | None,
    db: str | None,
    catalog: str | None,
    mcp_commands: tuple[str, ...],
    mcp_prefix: bool,
    mcp_replace: bool,
    path: str,
    session: str | None,
    script: str | None,
    max_steps: int,
    max_tokens: int | None,
    fmt: str,
) -> None:
    """Chat with a model; tooltray picks, loads and keeps its tools."""
    registry = load_registry(catalog)
    session_id = session or f"chat-{uuid.uuid4().hex[:12]}"
    users = read_script(script) if script else None
    sources = _mcp_sources(mcp_commands, registry, prefix=mcp_prefix, replace=mcp_replace)
    with sources:
        agent = build_agent(
            registry, db, path, base_url, model, api_key=api_key, max_steps=max_steps
        )
        if max_tokens is not None:
            agent.request_options["max_tokens"] = max_tokens
        try:
            _converse(agent, session_id, users, fmt)
        finally:
            agent.trinket.close()
            agent.trinket.store.close()  # opened here, passed in: the trinket leaves it open


def _converse(agent: Agent, session_id: str, users: Sequence[str] | None, fmt: str) -> None:
    start = agent.start(session_id)
    if fmt == "table":
        click.echo(f"session {session_id}: {len(start.loaded)} tools loaded ({start.mode})")
    history: list[dict[str, Any]] = []
    before = list(start.loaded)
    for user in users if users is not None else _stdin_lines():
        result = agent.run_turn(session_id, history, user)
        history += result.messages
        record = turn_record(user, result, before)
        before = result.loaded
        if fmt == "json":
            click.echo(json.dumps(record, ensure_ascii=False, default=str))
        else:
            print_turn(record)


COMMANDS: list[click.Command] = [chat]
