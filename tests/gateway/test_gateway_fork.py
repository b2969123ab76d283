"""A gateway session that starts from another's loaded set (a subagent's MCP client):
``--fork PARENT`` over stdio and ``?fork=PARENT`` over streamable HTTP, real servers and store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
from gateway_helpers import http_client, http_gateway, servers, stdio_gateway, text


def test_stdio_fork_starts_from_the_parent_and_changes_only_itself(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("math"))
    db = f"sqlite:///{tmp_path / 'gw.db'}"

    async def scenario() -> None:
        async with stdio_gateway(config, db, "--session", "lead") as gw:
            assert "Loaded" in text(await gw.call("load_tools", tools=["add_numbers"]))
            parent = await gw.names()
        assert "add_numbers" in parent
        async with stdio_gateway(config, db, "--session", "sub", "--fork", "lead") as gw:
            assert await gw.names() == parent  # the subagent starts with the lead's tools
            assert text(await gw.call("add_numbers", a=20, b=22)) == "42"
            await gw.call("unload_tools", tools=["add_numbers"])
            assert "add_numbers" not in await gw.names()
        async with stdio_gateway(config, db, "--session", "lead") as gw:
            assert await gw.names() == parent  # the child's unload left the lead alone
        async with stdio_gateway(config, db, "--session", "sub", "--fork", "lead") as gw:
            assert "add_numbers" not in await gw.names()  # an existing child resumes as is
        async with stdio_gateway(config, db, "--session", "solo", "--fork", "nobody") as gw:
            assert "add_numbers" not in await gw.names()  # no such parent: starts on its own

    anyio.run(scenario)


def test_http_fork_names_the_parent_in_the_url(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("math"))
    db = f"sqlite:///{tmp_path / 'gw.db'}"

    async def scenario(url: str) -> None:
        async with http_client(f"{url}?session=lead") as gw:
            await gw.call("load_tools", tools=["add_numbers"])
            parent = await gw.names()
        async with http_client(f"{url}?session=sub&fork=lead") as gw:
            assert await gw.names() == parent
        async with http_client(f"{url}?session=plain") as gw:
            assert "add_numbers" not in await gw.names()

    with http_gateway(config, db, tmp_path / "gateway.log") as url:
        anyio.run(scenario, url)
