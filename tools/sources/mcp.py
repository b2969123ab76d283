"""MCP servers as tool sources: connect over stdio, list the tools, call them synchronously.

The official ``mcp`` SDK is async; the agent loop is not. An :class:`MCPSource` runs the client
session on a background event loop (an anyio blocking portal), so ``call`` is an ordinary blocking
function that fits the registry's executor slot. Each server's tools form a bundle named after
the server, with source ``mcp:<server>``.

Example:
    >>> with MCPSource(["python", "server.py"]) as source:   # doctest: +SKIP
    ...     source.register(registry)
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractContextManager, asynccontextmanager
from typing import IO, Any

from tooltray.tools.errors import MCPSourceError, MCPToolError
from tooltray.tools.importers.mcp import from_mcp
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import MAX_BUNDLE, ToolSpec


def _mcp() -> Any:
    try:
        import mcp
    except ImportError as exc:
        raise MCPSourceError(
            "MCP sources need the official SDK: pip install 'tooltray[mcp]' (or pip install mcp)."
        ) from exc
    return mcp


def content_text(result: Any) -> str:
    """The text of a ``CallToolResult``: text blocks joined, other blocks named."""
    parts = []
    for block in getattr(result, "content", None) or []:
        text = getattr(block, "text", None)
        if isinstance(text, str):
            parts.append(text)
        else:
            kind = getattr(block, "mime_type", None) or getattr(block, "mimeType", None)
            parts.append(f"[{getattr(block, 'type', 'content')} {kind or ''}]".replace(" ]", "]"))
    if not parts and getattr(result, "structured_content", None) is not None:
        import json

        return json.dumps(result.structured_content, ensure_ascii=False)
    return "\n".join(parts)


def _field(obj: Any, name: str, old_name: str, default: Any = None) -> Any:
    """``obj.name``, or ``obj.old_name`` on an SDK that predates the rename (MCP SDK v2 renamed
    camelCase fields and warns on every read of the old name)."""
    return getattr(obj, name) if hasattr(obj, name) else getattr(obj, old_name, default)


def _is_error(result: Any) -> bool:
    return bool(_field(result, "is_error", "isError", False))


def _stderr() -> IO[str]:
    """This process's stderr when it is a real file (not under a test runner), else the OS one."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__ or open(os.devnull, "w")  # noqa: SIM115
    return sys.stderr


def server_name(raw: str) -> str:
    """The bundle name of a server's self-reported name, as written on one line (``Ant Design
    Components`` stays so); tool-name prefixes sanitise it where they use it."""
    return " ".join(raw.split())[:MAX_BUNDLE] or "mcp"


class MCPSource:
    """One MCP server over stdio, usable from synchronous code.

    Args:
        command: the server command, as a list or a shell-like string.
        name: bundle name for its tools; ``None`` uses the name the server reports.
        env: extra environment variables for the server process.
        cwd: working directory of the server process.
        prefix: name tools ``mcp__<server>__<tool>`` (the registry resolves both spellings).
        timeout: seconds to wait for start-up and for each call.
        errlog: where the server's stderr goes (default: this process's stderr).
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        name: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        prefix: bool = False,
        timeout: float = 30.0,
        errlog: IO[str] | None = None,
    ) -> None:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise MCPSourceError("MCPSource needs a command, e.g. ['python', 'server.py'].")
        self.argv = argv
        self.name = name
        self.env = dict(env) if env else None
        self.cwd = cwd
        self.prefix = prefix
        self.timeout = timeout
        self.errlog = errlog
        self.tools: list[Any] = []
        self.specs: list[ToolSpec] = []
        self._names: dict[str, str] = {}
        self._portal_cm: AbstractContextManager[Any] | None = None
        self._portal: Any = None
        self._session_cm: AbstractContextManager[Any] | None = None
        self._session: Any = None

    # ----- lifecycle -------------------------------------------------------------------------

    def start(self) -> MCPSource:
        """Start the server, initialise the session and list its tools (idempotent)."""
        if self._session is not None:
            return self
        from anyio.from_thread import start_blocking_portal

        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            self._session_cm = self._portal.wrap_async_context_manager(self._connect())
            self._session = self._session_cm.__enter__()
        except BaseException as exc:
            self._session_cm = self._session = None
            self._close_portal()
            if isinstance(exc, MCPSourceError):
                raise
            raise MCPSourceError(
                f"Could not start MCP server {shlex.join(self.argv)!r}: {exc!r}. "
                "Check the command runs on its own and speaks MCP over stdio."
            ) from exc
        self.specs = self._build_specs()
        return self

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[Any]:
        import anyio

        mcp = _mcp()
        params = mcp.StdioServerParameters(
            command=self.argv[0], args=self.argv[1:], env=self.env, cwd=self.cwd
        )
        extra = {"errlog": self.errlog or _stderr()}
        async with (
            mcp.stdio_client(params, **extra) as (read, write),
            mcp.ClientSession(read, write) as session,
        ):
            with anyio.fail_after(self.timeout):
                init = await session.initialize()
                self.tools = await self._list_all(session)
            reported = getattr(getattr(init, "server_info", None), "name", None)
            reported = reported or getattr(getattr(init, "serverInfo", None), "name", None)
            self.name = self.name or server_name(str(reported or "mcp"))
            yield session

    @staticmethod
    async def _list_all(session: Any) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        while True:
            params = _mcp().types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params) if params else await session.list_tools()
            tools += list(page.tools)
            cursor = _field(page, "next_cursor", "nextCursor")
            if not cursor:
                return tools

    def close(self) -> None:
        """End the session and stop the server process (safe to call twice)."""
        session_cm, self._session_cm, self._session = self._session_cm, None, None
        try:
            if session_cm is not None:
                session_cm.__exit__(None, None, None)
        finally:
            self._close_portal()

    def _close_portal(self) -> None:
        portal_cm, self._portal_cm, self._portal = self._portal_cm, None, None
        if portal_cm is not None:
            portal_cm.__exit__(None, None, None)

    def __enter__(self) -> MCPSource:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----- tools -----------------------------------------------------------------------------

    def _build_specs(self) -> list[ToolSpec]:
        specs = []
        for tool in self.tools:
            spec = from_mcp(tool, server=self.name, prefix=self.prefix)
            self._names[spec.name] = str(getattr(tool, "name", spec.name))
            specs.append(spec)
        return specs

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> str:
        """Call tool ``name`` (its registered name) and return its text content.

        Raises:
            MCPToolError: the tool reported an error.
            MCPSourceError: the source is closed, or the call failed or timed out.
        """
        if self._session is None or self._portal is None:
            raise MCPSourceError(f"MCP source {self.name!r} is not started: call start() first.")
        original = self._names.get(name, name)
        try:
            result = self._portal.call(self._call, original, dict(arguments or {}))
        except TimeoutError as exc:
            raise MCPSourceError(
                f"MCP tool {original!r} on {self.name!r} gave no answer in {self.timeout:.0f} s."
            ) from exc
        except Exception as exc:
            raise MCPSourceError(f"MCP call {original!r} on {self.name!r} failed: {exc}") from exc
        text = content_text(result)
        if _is_error(result):
            raise MCPToolError(text or f"MCP tool {original!r} reported an error.")
        return text

    async def _call(self, name: str, arguments: dict[str, Any]) -> Any:
        import anyio

        with anyio.fail_after(self.timeout):
            return await self._session.call_tool(name, arguments)

    def executor(self, name: str) -> Callable[..., str]:
        """A blocking callable ``fn(**arguments)`` that runs tool ``name`` on this server."""

        def run(**arguments: Any) -> str:
            return self.call(name, arguments)

        run.__name__ = name
        return run

    def rename(self, names: Mapping[str, str]) -> None:
        """Register the tools ``names`` maps (registered name -> new name) under new names.

        A caller keeping a catalog tool beside a same-named server tool gives the server's one
        a name the registry does not strip to the catalog's (``git_git_status``), since
        ``mcp__git__git_status`` and ``git_status`` resolve as one tool.
        """
        for i, spec in enumerate(self.specs):
            new = names.get(spec.name)
            if new is not None:
                renamed = ToolSpec.model_validate({**spec.model_dump(), "name": new})
                self._names[new] = self._names.pop(spec.name, spec.name)
                self.specs[i] = renamed

    def register(self, registry: ToolRegistry) -> list[ToolSpec]:
        """Start if needed, then add every tool to ``registry`` with an executor; return specs."""
        self.start()
        for spec in self.specs:
            registry.register(spec, self.executor(spec.name))
        return list(self.specs)
