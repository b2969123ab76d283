"""The gateway over streamable HTTP: one session per client, named ones resumed after restart."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
from gateway_helpers import http_client, http_gateway, servers, text

META = ["load_tools", "unload_tools", "fallback", "read_result"]


def test_http_sessions_notify_forward_and_resume(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("time", "math", always=("time",)))
    db = f"sqlite:///{tmp_path / 'gw.db'}"
    log = tmp_path / "gateway.log"

    async def first_run(url: str) -> list[str]:
        async with http_client(f"{url}?session=h1") as gw:
            assert await gw.names() == [*META, "get_current_time", "convert_time"]
            seen = gw.list_changed()
            await gw.call("load_tools", tools=["add_numbers"])
            assert gw.list_changed() == seen + 1
            assert text(await gw.call("add_numbers", a=20, b=22)) == "42"
            named = await gw.names()
        async with http_client(url) as other:  # no name: its own Mcp-Session-Id session
            assert "add_numbers" not in await other.names()
        return named

    async def second_run(url: str) -> list[str]:
        async with http_client(f"{url}?session=h1") as gw:
            return await gw.names()

    with http_gateway(config, db, log) as url:
        named = anyio.run(first_run, url)
    assert named[-1] == "add_numbers"
    with http_gateway(config, db, log) as url:
        assert anyio.run(second_run, url) == named
