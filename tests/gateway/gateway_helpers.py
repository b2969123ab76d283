"""Helpers for the gateway tests: configs of real MCP servers, and the gateway itself.

The gateway runs as a real ``tooltray mcp serve`` process (stdio, or streamable HTTP on a free
loopback port), fronting real servers: ``mcp-server-time`` and ``mcp-server-git`` from PyPI,
``tests/agent/mcp_server.py`` and ``flaky_server.py``. Every process a test starts is stopped
by the test.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, types  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MATH_SERVER = ROOT / "tests" / "agent" / "mcp_server.py"
FLAKY_SERVER = HERE / "flaky_server.py"
RUN_CLI = "from tooltray.memory.cli import main; main()"


def pypi_server(name: str) -> str:
    """The console script of an MCP server installed from PyPI (dev extra), else skip."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip(f"{name} is not installed: pip install -e '.[dev]'")
    return found


def servers(*names: str, always: tuple[str, ...] = ()) -> dict[str, Any]:
    """An ``mcpServers`` block of the named test servers."""
    table: dict[str, dict[str, Any]] = {
        "time": {"command": pypi_server("mcp-server-time"), "args": ["--local-timezone", "UTC"]},
        "git": {"command": pypi_server("mcp-server-git"), "args": ["--repository", str(ROOT)]},
        "math": {"command": sys.executable, "args": [str(MATH_SERVER)]},
        "flaky": {"command": sys.executable, "args": [str(FLAKY_SERVER)]},
        "broken": {"command": str(HERE / "no-such-server")},
    }
    out = {n: dict(table[n]) for n in names}
    for n in always:
        out[n]["alwaysLoad"] = True
    return {"mcpServers": out}


def gateway_env(**extra: str) -> dict[str, str]:
    """This interpreter's environment (so the gateway imports the same tooltray) plus ``extra``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.update(extra)
    return env


def serve_args(config: Path, db: str, *more: str) -> list[str]:
    """``tooltray mcp serve`` as arguments for this interpreter."""
    return ["-c", RUN_CLI, "mcp", "serve", "--config", str(config), "--db", db, *more]


class Client:
    """A ``ClientSession`` that records every notification with its arrival time."""

    def __init__(self, session: ClientSession, notes: list[tuple[float, Any]]) -> None:
        self.session = session
        self.notes = notes

    async def names(self) -> list[str]:
        """The names ``tools/list`` answers, in order."""
        return [t.name for t in (await self.session.list_tools()).tools]

    async def call(self, name: str, **arguments: Any) -> types.CallToolResult:
        """``tools/call``."""
        return await self.session.call_tool(name, arguments)

    def list_changed(self) -> int:
        """How many ``notifications/tools/list_changed`` arrived so far."""
        return sum(isinstance(m, types.ToolListChangedNotification) for _, m in self.notes)


def text(result: types.CallToolResult) -> str:
    """The text blocks of a result, joined."""
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


@asynccontextmanager
async def _client(read: Any, write: Any) -> AsyncIterator[Client]:
    notes: list[tuple[float, Any]] = []

    async def on_message(message: Any) -> None:
        notes.append((time.perf_counter(), message))

    async with ClientSession(read, write, message_handler=on_message) as session:
        await session.initialize()
        yield Client(session, notes)


@asynccontextmanager
async def stdio_gateway(
    config: Path, db: str, *more: str, errlog: Any = None, **env: str
) -> AsyncIterator[Client]:
    """The gateway over stdio with an initialized client; stopped on exit."""
    params = StdioServerParameters(
        command=sys.executable, args=serve_args(config, db, *more), env=gateway_env(**env)
    )
    log = errlog or sys.stderr
    async with stdio_client(params, errlog=log) as (read, write), _client(read, write) as client:
        yield client


@asynccontextmanager
async def http_client(url: str, close: bool = True) -> AsyncIterator[Client]:
    """An initialized client over streamable HTTP (``close=False``: it leaves without the
    ``DELETE`` that ends its MCP session, as a crashed or careless client does)."""
    async with (
        streamable_http_client(url, terminate_on_close=close) as (read, write),
        _client(read, write) as client,
    ):
        yield client


@asynccontextmanager
async def token_client(url: str, token: str, ids: list[str] | None = None) -> AsyncIterator[Client]:
    """An initialized MCP client sending ``token``; ``ids`` collects its Mcp-Session-Id."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})

    async def note(response: Any) -> None:
        sid = response.headers.get("mcp-session-id")
        if sid and ids is not None and sid not in ids:
            ids.append(sid)

    http.event_hooks["response"] = [note]
    async with (
        http,
        streamable_http_client(url, http_client=http) as (read, write),
        _client(read, write) as client,
    ):
        yield client


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def http_gateway(config: Path, db: str, log: Path, **env: str) -> Iterator[str]:
    """The gateway serving streamable HTTP on loopback; yields its base URL; stopped on exit."""
    port = free_port()
    args = serve_args(config, db, "--http", f"127.0.0.1:{port}")
    with log.open("a") as err:
        proc = subprocess.Popen([sys.executable, *args], env=gateway_env(**env), stderr=err)
    try:
        wait_listening(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"gateway exited with {proc.returncode} before listening")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"gateway did not listen on {port} within {timeout} s")
