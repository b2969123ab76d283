"""One upstream MCP server, kept alive: started, watched, restarted with backoff.

An upstream that fails to start, hangs or dies must not take the gateway down: its run loop logs
one line, marks it down (its tools answer with an error naming it), waits (0.5 s doubling up to
30 s) and starts it again. A ping every few seconds tells a hung server from a slow one; a call
that breaks the connection wakes the watcher at once.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tooltray.memory.gateway.config import ServerConfig
from tooltray.tools.errors import TooltrayError

log = logging.getLogger("tooltray.gateway")
OnTools = Callable[["Upstream"], Awaitable[None]]


class UpstreamError(TooltrayError):
    """An upstream server is down, timed out, or broke during a call."""


def _errlog() -> TextIO:
    """Where upstream stderr goes: this process's stderr if it is a real file, else devnull."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return open(os.devnull, "w")  # noqa: SIM115
    return sys.stderr


class Upstream:
    """A supervised client connection to one MCP server.

    Args:
        config: how to reach the server.
        on_tools: awaited with this upstream each time it (re)starts and has listed its tools.
        start_timeout: seconds for start-up, ``initialize`` and ``tools/list``.
        call_timeout: seconds a forwarded call may take.
        ping_interval: seconds between liveness pings.
        backoff: first restart delay in seconds (doubles up to ``backoff_max``).
        backoff_max: longest restart delay.
    """

    def __init__(
        self,
        config: ServerConfig,
        on_tools: OnTools,
        *,
        start_timeout: float = 30.0,
        call_timeout: float = 120.0,
        ping_interval: float = 5.0,
        backoff: float = 0.5,
        backoff_max: float = 30.0,
    ) -> None:
        self.config = config
        self.name = config.name
        self.on_tools = on_tools
        self.start_timeout, self.call_timeout = start_timeout, call_timeout
        self.ping_interval = ping_interval
        self.backoff, self.backoff_max = backoff, backoff_max
        self.tools: list[types.Tool] = []
        self.error = "starting"
        self.starts = 0
        self.settled = anyio.Event()  # set once the first start attempt has ended either way
        self._session: ClientSession | None = None
        self._broken = anyio.Event()

    @property
    def up(self) -> bool:
        """True while a live session is connected."""
        return self._session is not None

    async def run(self) -> None:
        """Keep the server running until cancelled (the gateway's shutdown)."""
        delay = self.backoff
        while True:
            if await self._serve_once():
                delay = self.backoff
            self.settled.set()
            await anyio.sleep(delay)
            delay = min(delay * 2, self.backoff_max)

    @asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        if self.config.url is not None:
            async with streamable_http_client(self.config.url) as streams:
                yield streams
            return
        params = StdioServerParameters(
            command=str(self.config.command),
            args=list(self.config.args),
            env=self.config.env or None,
            cwd=self.config.cwd,
        )
        async with stdio_client(params, errlog=_errlog()) as streams:
            yield streams

    async def _serve_once(self) -> bool:
        """One connection's lifetime; returns whether it ever came up."""
        came_up = False
        try:
            async with self._transport() as (read, write), ClientSession(read, write) as session:
                await self._handshake(session)
                came_up = True
                await self._went_up(session)
                await self._watch(session)
                reason = "its connection ended"
        except Exception as exc:  # any failure of one server must leave the others serving
            reason = _describe(exc)
        self._session = None
        self.error = reason
        state = "died" if came_up else "failed to start"
        log.error(
            "tooltray gateway: MCP server %r %s (%s); serving the others, restarting it "
            "with backoff.",
            self.name,
            state,
            reason,
        )
        return came_up

    async def _handshake(self, session: ClientSession) -> None:
        """``initialize`` and ``tools/list``, within the start timeout."""
        try:
            with anyio.fail_after(self.start_timeout):
                await session.initialize()
                self.tools = await _list_all(session)
        except TimeoutError as exc:
            raise UpstreamError(f"no answer within {self.start_timeout:.0f} s at start-up") from exc

    async def _went_up(self, session: ClientSession) -> None:
        self._broken = anyio.Event()
        self._session = session
        self.starts += 1
        self.error = ""
        if self.starts > 1:
            log.warning("tooltray gateway: MCP server %r is back.", self.name)
        await self.on_tools(self)
        self.settled.set()

    async def _watch(self, session: ClientSession) -> None:
        """Return when a call found the connection broken; raise when a ping gets no answer."""
        while True:
            with anyio.move_on_after(self.ping_interval):
                await self._broken.wait()
                return
            wait = max(self.ping_interval, 2.0)
            try:
                with anyio.fail_after(wait):
                    await session.send_ping()
            except TimeoutError as exc:
                raise UpstreamError(f"no answer to a ping in {wait:.0f} s (hung)") from exc

    async def call(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Forward one call to the server's own tool name ``tool``.

        Raises:
            UpstreamError: the server is down, timed out, or the connection broke.
        """
        session = self._session
        if session is None:
            raise UpstreamError(
                f"MCP server {self.name!r} is unavailable ({self.error}); the gateway is "
                "restarting it, try again shortly."
            )
        try:
            with anyio.fail_after(self.call_timeout):
                return await session.call_tool(tool, arguments)
        except TimeoutError as exc:
            raise UpstreamError(
                f"MCP server {self.name!r} gave no answer to {tool!r} in {self.call_timeout:.0f} s."
            ) from exc
        except MCPError as exc:
            raise UpstreamError(
                f"MCP server {self.name!r} refused {tool!r}: {exc.error.message}"
            ) from exc
        except Exception as exc:
            self._broken.set()
            raise UpstreamError(
                f"MCP server {self.name!r} failed during {tool!r}: {_describe(exc)}"
            ) from exc


async def _list_all(session: ClientSession) -> list[types.Tool]:
    """Every page of ``tools/list``."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            return tools


def _describe(exc: BaseException) -> str:
    """One line for an exception, unwrapping task-group exception groups."""
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple) and inner:  # an ExceptionGroup from a task group
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    text = str(exc) or type(exc).__name__
    if isinstance(exc, UpstreamError):
        return text[:300]
    return f"{type(exc).__name__}: {text}"[:300]
