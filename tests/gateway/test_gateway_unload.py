"""What ``load_tools`` loads by a server name, ``unload_tools`` unloads by the same name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
from gateway_helpers import servers, stdio_gateway, text


def test_a_server_loaded_by_name_unloads_by_name(
    write_config: Callable[..., Path], db_url: str
) -> None:
    config = write_config(servers("flaky"))

    async def scenario() -> None:
        async with stdio_gateway(config, db_url, "--session", "u1") as gw:
            start = await gw.names()
            assert "Loaded" in text(await gw.call("load_tools", tools=["flaky"]))
            loaded = await gw.names()
            assert {"crash", "echo_back"} <= set(loaded) - set(start)
            answer = text(await gw.call("unload_tools", tools=["flaky"]))
            assert answer.startswith("Unloaded: ") and "crash" in answer
            assert await gw.names() == start

    anyio.run(scenario)
