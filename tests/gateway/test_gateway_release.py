"""A closed session's memory is released: the real gateway, in this process, over HTTP.

Clients open sessions (unnamed and named), list, call, get a long result shortened, and close
(the SDK client sends ``DELETE``). Afterwards the gateway holds no state of theirs: no live
trinket session, no per-session dict entry, no held result text. Counted, never timed.
"""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from gateway_helpers import free_port, http_client, servers, text

from tooltray.memory.config import Settings
from tooltray.memory.gateway import load_config
from tooltray.memory.gateway.gateway import Gateway
from tooltray.memory.gateway.serve import CloseWatch, http_app, serve_http
from tooltray.memory.gateway.state import GatewayState


async def listening(port: int) -> None:
    """Wait until the in-process server accepts connections."""
    while True:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        await anyio.sleep(0.05)


def held(gateway: Gateway, app: CloseWatch) -> dict[str, int]:
    """How many per-session things the gateway holds."""
    return {
        "trinket sessions": len(gateway.trinket._sessions),
        "turns": len(gateway._turns),
        "listings": len(gateway._listings),
        "listeners": len(gateway.listeners),
        "connections": len(app.keys._by_connection),
        "result texts": len(gateway.trinket.shelf._local),
    }


def in_process(
    write_config: Callable[..., Path], tmp_path: Path, **settings: Any
) -> tuple[Gateway, CloseWatch, int]:
    """A gateway over the ``math`` server and its HTTP app on a free port (not yet serving)."""
    config = load_config(write_config(servers("math")))
    merged = Settings(db=f"sqlite:///{tmp_path / 'gw.db'}", **settings)
    port = free_port()
    gateway = Gateway(config, merged, GatewayState(None))
    app = http_app(gateway, merged, "127.0.0.1", port)
    assert isinstance(app, CloseWatch)
    return gateway, app, port


def serve_while(
    gateway: Gateway, app: CloseWatch, port: int, body: Callable[[], Awaitable[None]]
) -> None:
    """Serve ``app`` in this process while ``body`` runs, then stop and close the gateway."""

    async def scenario() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve_http, gateway, app, "127.0.0.1", port)
            await listening(port)
            await body()
            tg.cancel_scope.cancel()

    try:
        anyio.run(scenario)
    finally:
        gateway.close()


async def released(gateway: Gateway, app: CloseWatch) -> dict[str, int]:
    """What the gateway holds once nothing is, polled within a bound generous on a loaded
    machine (not a timing)."""
    with anyio.move_on_after(120):
        while any(held(gateway, app).values()):
            await anyio.sleep(0.1)
    return held(gateway, app)


def test_closed_sessions_leave_no_state_behind(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    gateway, app, port = in_process(write_config, tmp_path, result_max_chars=200)
    url = f"http://127.0.0.1:{port}/mcp"
    seen: list[dict[str, int]] = []

    async def body() -> None:
        for i in range(6):
            where = f"{url}?session=named-{i}" if i % 2 else url
            async with http_client(where) as client:
                assert "load_tools" in await client.names()
                assert text(await client.call("add_numbers", a=i, b=1)) == str(i + 1)
                assert "read_result" in text(await client.call("long_report", lines=50))
                seen.append(held(gateway, app))
        async with http_client(f"{url}?session=named-1") as again:  # resumed from the store
            assert "add_numbers" in await again.names()
        seen.append(held(gateway, app))  # after the last close, before shutting down

    serve_while(gateway, app, port, body)
    *open_counts, after = seen
    assert all(n["trinket sessions"] >= 1 and n["result texts"] >= 1 for n in open_counts)
    assert after == dict.fromkeys(after, 0)


def test_sessions_the_sdk_ends_when_idle_are_released(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    """Clients that leave without ``DELETE``: the SDK ends their MCP sessions after the
    (tiny) idle timeout, and the gateway then holds nothing of theirs. Polled, not timed."""
    gateway, app, port = in_process(
        write_config, tmp_path, result_max_chars=200, gateway_session_idle=0.3
    )
    url = f"http://127.0.0.1:{port}/mcp"
    seen: list[dict[str, int]] = []

    async def body() -> None:
        for i in range(4):
            where = f"{url}?session=idle-{i}" if i % 2 else url
            async with http_client(where, close=False) as client:
                assert "read_result" in text(await client.call("long_report", lines=50))
                seen.append(held(gateway, app))
        seen.append(await released(gateway, app))

    serve_while(gateway, app, port, body)
    *open_counts, after = seen
    assert all(n["trinket sessions"] >= 1 and n["connections"] >= 1 for n in open_counts)
    assert after == dict.fromkeys(after, 0)


def test_a_named_session_initialized_and_left_is_released(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    """``initialize`` alone starts a named session; its connection ending releases it."""
    gateway, app, port = in_process(write_config, tmp_path, gateway_session_idle=0.3)
    seen: list[dict[str, int]] = []

    async def body() -> None:
        for close in (True, False):
            async with http_client(f"http://127.0.0.1:{port}/mcp?session=bare", close):
                seen.append(held(gateway, app))
            seen.append(await released(gateway, app))

    serve_while(gateway, app, port, body)
    assert seen[0]["trinket sessions"] == 1 and seen[2]["trinket sessions"] == 1
    assert seen[1] == dict.fromkeys(seen[1], 0) and seen[3] == seen[1]
