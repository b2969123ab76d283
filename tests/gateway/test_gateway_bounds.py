"""Every request is bounded before work, on the real gateway (stdio and streamable HTTP).

``load_tools`` with 20,000 copies of one name used to remove the repeats (in quadratic time)
before its 64-name cap and then load the tool; it is refused before any per-name work now.
Oversized tool names, arguments and session names are refused the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from gateway_helpers import Client, http_client, http_gateway, servers, stdio_gateway, text

from tooltray.memory.metatools.meta_tools import MAX_ITEMS, parse_load
from tooltray.tools.errors import MetaToolArgumentError


def test_names_are_capped_before_repeats_are_removed() -> None:
    with pytest.raises(MetaToolArgumentError, match=f"at most {MAX_ITEMS} distinct names"):
        parse_load({"tools": ["add_numbers"] * 20_000})
    with pytest.raises(MetaToolArgumentError, match="distinct names"):
        parse_load({"tools": ",".join(["add_numbers"] * 20_000)})
    assert parse_load({"tools": ["a", "b", "a", " b ", ""] * 10}).names == ("a", "b")


async def bounded(gw: Client) -> None:
    many = await gw.call("load_tools", tools=["add_numbers"] * 20_000)
    assert many.is_error and "distinct names" in text(many)
    assert "add_numbers" not in await gw.names()
    huge = await gw.call("add_numbers", a=1, b=2, pad="x" * 600_000)
    assert huge.is_error and "at most 500000" in text(huge)
    long_name = await gw.session.call_tool("a" * 100_000, {})
    assert long_name.is_error and "at most 64" in text(long_name)
    assert text(await gw.call("add_numbers", a=20, b=22)) == "42"  # still serving


def test_the_gateway_refuses_oversized_requests_stdio(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("math"))

    async def scenario() -> None:
        async with stdio_gateway(config, f"sqlite:///{tmp_path / 'gw.db'}") as gw:
            await bounded(gw)

    anyio.run(scenario)


def test_the_gateway_refuses_oversized_requests_http(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("math"))

    async def scenario(url: str) -> None:
        async with http_client(url) as gw:
            await bounded(gw)
        with pytest.raises(BaseException) as refused:
            async with http_client(f"{url}?session={'s' * 1000}") as gw:
                await gw.names()
        inner: BaseException = refused.value
        while getattr(inner, "exceptions", None):
            inner = inner.exceptions[0]  # type: ignore[attr-defined]
        assert "?session= takes 1-64 characters" in str(inner)

    with http_gateway(config, f"sqlite:///{tmp_path / 'gw.db'}", tmp_path / "gw.log") as url:
        anyio.run(scenario, url)
