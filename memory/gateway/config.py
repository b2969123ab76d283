"""The gateway's config file: the ``mcpServers`` JSON that MCP clients already use.

One entry per upstream server, either a local process (``command``, ``args``, ``env``, ``cwd``)
or a remote streamable-HTTP server (``url``). ``"alwaysLoad": true`` pins the server's tools
(listed from the first ``tools/list``). An optional top-level ``"tooltray"`` object tunes the
gateway itself: ``prefix`` (``"clash"``, ``"always"`` or ``"never"``), ``prefixFormat``, and
``reveal`` (``"list"``, the default, or ``"bridge"``; ``tooltray mcp serve --reveal`` overrides it).

``reveal`` says where a tool loaded mid-session goes. ``list``: into ``tools/list``, announced
with ``notifications/tools/list_changed``, so the client rewrites its prompt's tool prefix (and
re-processes the conversation after it). ``bridge``: ``tools/list`` holds the meta-tools, the
``call_tool`` bridge and the tools chosen at the session's start, and stays the same until the
next boundary (``initialize``); a loaded tool is listed in the ``load_tools`` answer and called
through ``call_tool``, so the client's cached prefix survives.

Example::

    {"mcpServers": {
        "time": {"command": "mcp-server-time", "alwaysLoad": true},
        "git": {"command": "mcp-server-git", "args": ["--repository", "."]},
        "docs": {"url": "http://127.0.0.1:9000/mcp"}},
     "tooltray": {"prefix": "clash", "prefixFormat": "{server}_{tool}", "reveal": "bridge"}}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tooltray.tools.errors import ConfigError, ToolSpecError
from tooltray.tools.names import sanitize_name
from tooltray.tools.spec import check_bundle

PrefixMode = Literal["clash", "always", "never"]
RevealMode = Literal["list", "bridge"]
REVEAL_MODES: tuple[RevealMode, ...] = ("list", "bridge")
DEFAULT_FORMAT = "{server}_{tool}"
_SERVER_KEYS = frozenset({"command", "args", "env", "cwd", "url", "alwaysLoad", "type", "disabled"})


class GatewayConfigError(ConfigError):
    """The gateway's config file cannot be used; the message names the fix."""


@dataclass(frozen=True)
class ServerConfig:
    """One upstream MCP server.

    Attributes:
        name: the key in ``mcpServers``; also the bundle its tools form.
        command: the program to start (stdio servers).
        args: its arguments.
        env: extra environment variables for it.
        cwd: its working directory.
        url: a remote streamable-HTTP endpoint instead of a command.
        always_load: pin this server's tools (they are listed from the start).
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    always_load: bool = False

    def describe(self) -> str:
        """How the server is reached, for log lines."""
        return self.url or " ".join((self.command or "", *self.args)).strip()


@dataclass(frozen=True)
class GatewayConfig:
    """The parsed config: the servers in file order, how clashing names are prefixed, and where
    tools loaded mid-session go (``reveal``: ``list`` or ``bridge``, see the module text)."""

    servers: tuple[ServerConfig, ...]
    prefix: PrefixMode = "clash"
    prefix_format: str = DEFAULT_FORMAT
    reveal: RevealMode = "list"

    def exposed_name(self, server: str, tool: str) -> str:
        """The prefixed form of ``tool`` from ``server``, sanitised to the provider rule (a
        server name may have spaces; a tool name may not)."""
        return sanitize_name(self.prefix_format.format(server=server, tool=tool))


def _fail(path: str, why: str) -> GatewayConfigError:
    return GatewayConfigError(f"Gateway config {path!r}: {why}")


def _server(path: str, name: str, raw: Any) -> ServerConfig:
    if not isinstance(raw, dict):
        raise _fail(path, f"server {name!r} must be an object with 'command' or 'url'.")
    try:
        check_bundle(name, "server")  # a bundle, shown as written: "Ant Design Components"
    except ToolSpecError as exc:
        raise _fail(path, str(exc)) from None
    unknown = sorted(set(raw) - _SERVER_KEYS)
    if unknown:
        raise _fail(
            path, f"server {name!r} has unknown keys {unknown}; allowed: {sorted(_SERVER_KEYS)}."
        )
    command, url = raw.get("command"), raw.get("url")
    if (command is None) == (url is None):
        raise _fail(path, f"server {name!r} needs exactly one of 'command' or 'url'.")
    args, env = raw.get("args", []), raw.get("env", {})
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _fail(path, f"server {name!r}: 'args' must be a list of strings.")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise _fail(path, f"server {name!r}: 'env' must map names to strings.")
    for key, value in (("command", command), ("url", url), ("cwd", raw.get("cwd"))):
        if value is not None and (not isinstance(value, str) or not value):
            raise _fail(path, f"server {name!r}: {key!r} must be a non-empty string.")
    if not isinstance(raw.get("alwaysLoad", False), bool):
        raise _fail(path, f"server {name!r}: 'alwaysLoad' must be true or false.")
    return ServerConfig(
        name, command, tuple(args), dict(env), raw.get("cwd"), url, raw.get("alwaysLoad", False)
    )


def _check_format(path: str, fmt: Any) -> str:
    """A prefix format must name both parts (``{server}__{tool}`` is fine: two servers' tools
    keep distinct names in the registry)."""
    if not isinstance(fmt, str) or "{server}" not in fmt or "{tool}" not in fmt:
        raise _fail(
            path, "'prefixFormat' must contain {server} and {tool}, e.g. '{server}_{tool}'."
        )
    return fmt


def parse_config(data: Any, path: str = "<config>") -> GatewayConfig:
    """Validate a loaded config document.

    Raises:
        GatewayConfigError: anything missing or malformed, with the fix in the message.
    """
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        raise _fail(path, 'expected {"mcpServers": {"name": {"command": ...}}}.')
    servers = tuple(
        _server(path, str(name), raw)
        for name, raw in data["mcpServers"].items()
        if not (isinstance(raw, dict) and raw.get("disabled") is True)
    )
    if not servers:
        raise _fail(path, "'mcpServers' lists no enabled server; add at least one.")
    own = data.get("tooltray", {})
    if not isinstance(own, dict):
        raise _fail(path, "'tooltray' must be an object.")
    prefix = own.get("prefix", "clash")
    if prefix not in ("clash", "always", "never"):
        raise _fail(path, f"'prefix' must be 'clash', 'always' or 'never', got {prefix!r}.")
    fmt = _check_format(path, own.get("prefixFormat", DEFAULT_FORMAT))
    reveal = own.get("reveal", "list")
    if reveal not in REVEAL_MODES:
        raise _fail(path, f"'reveal' must be 'list' or 'bridge', got {reveal!r}.")
    return GatewayConfig(servers, prefix, fmt, reveal)


def load_config(path: str | Path) -> GatewayConfig:
    """Read and validate the config file at ``path``.

    Raises:
        GatewayConfigError: the file is missing, is not JSON, or is malformed.
    """
    shown = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise _fail(shown, f"cannot read it ({exc.strerror or exc}); check the path.") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(shown, f"not valid JSON (line {exc.lineno}: {exc.msg}).") from exc
    return parse_config(data, shown)
