"""State lives in the store: a restarted gateway answers the same session with the same tools,
also after a client that went away in the middle of a call."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
from gateway_helpers import servers, stdio_gateway, text


def test_a_restarted_gateway_resumes_the_loaded_set(
    write_config: Callable[..., Path], db_url: str
) -> None:
    config = write_config(servers("flaky"))

    async def scenario() -> None:
        async with stdio_gateway(config, db_url, "--session", "r1") as gw:
            assert "Loaded" in text(await gw.call("load_tools", tools=["crash"]))
            assert text(await gw.call("echo_back", text="x")).startswith("x (pid")
            before = await gw.names()
            with anyio.move_on_after(1.0):  # the client leaves while the call is in flight
                await gw.call("wait_seconds", seconds=30)
        assert before[-2:] == ["crash", "echo_back"]
        async with stdio_gateway(config, db_url, "--session", "r1") as gw:
            assert await gw.names() == before
        async with stdio_gateway(config, db_url, "--session", "other") as gw:
            assert "crash" not in await gw.names()

    anyio.run(scenario)
