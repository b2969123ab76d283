"""State lives in the store: a restarted gateway answers the same session with the same tools."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
from gateway_helpers import servers, stdio_gateway, text


def test_a_restarted_gateway_resumes_the_loaded_set(
    write_config: Callable[..., Path], db_url: str
) -> None:
    config = write_config(servers("math"))

    async def scenario() -> None:
        async with stdio_gateway(config, db_url, "--session", "r1") as gw:
            assert "Loaded" in text(await gw.call("load_tools", tools=["reverse_text"]))
            assert text(await gw.call("add_numbers", a=1, b=1)) == "2"
            before = await gw.names()
        assert before[-2:] == ["reverse_text", "add_numbers"]
        async with stdio_gateway(config, db_url, "--session", "r1") as gw:
            assert await gw.names() == before
        async with stdio_gateway(config, db_url, "--session", "other") as gw:
            assert "reverse_text" not in await gw.names()

    anyio.run(scenario)
