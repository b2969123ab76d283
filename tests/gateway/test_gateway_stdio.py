"""The gateway over stdio, driven by the official ``mcp`` client, fronting real MCP servers."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import anyio
from gateway_helpers import servers, stdio_gateway, text

META = ["load_tools", "unload_tools", "fallback", "read_result"]


def test_lists_meta_and_pinned_loads_by_query_forwards_and_escapes(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("time", "git", "math", always=("time",)))
    db = f"sqlite:///{tmp_path / 'gw.db'}"

    async def scenario() -> None:
        async with stdio_gateway(config, db, "--session", "s1") as gw:
            first = await gw.names()
            assert first == [*META, "get_current_time", "convert_time"]  # CORE + pinned only
            seen = gw.list_changed()

            loaded = await gw.call("load_tools", query="show the git status of the repository")
            assert "git_status" in text(loaded)
            assert gw.list_changed() == seen + 1  # arrived before the call's answer
            second = await gw.names()
            assert second[: len(first)] == first  # growth only appends
            assert "git_status" in second and "add_numbers" not in second

            status = await gw.call("git_status", repo_path=str(Path(__file__).parents[2]))
            assert not status.is_error and "branch" in text(status).lower()

            unlisted = await gw.call("add_numbers", a=2, b=3)  # allowed, not listed: runs
            assert text(unlisted) == "5" and not unlisted.is_error
            assert gw.list_changed() == seen + 2
            assert (await gw.names())[-1] == "add_numbers"  # loaded as an escape

    anyio.run(scenario)


def test_long_results_go_behind_read_result_and_deny_holds_on_every_route(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("math"))
    db = f"sqlite:///{tmp_path / 'gw.db'}"

    async def scenario() -> None:
        async with stdio_gateway(config, db, TOOLTRAY_DENY='["reverse_text"]') as gw:
            long = text(await gw.call("long_report", lines=300))
            handle = re.search(r"r-[0-9a-f]{32}", long)
            assert len(long) < 3000 and handle is not None
            page = text(await gw.call("read_result", handle=handle.group(0), offset=1500))
            assert "report line" in page

            refused = await gw.call("reverse_text", text="abc")
            assert refused.is_error and "cba" not in text(refused)
            await gw.call("load_tools", tools=["reverse_text"])
            await gw.call("fallback")
            assert "reverse_text" not in await gw.names()

    anyio.run(scenario)


def test_a_bad_meta_tool_call_is_an_error_result(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    """Unusable meta-tool arguments come back with ``isError`` set, not as plain text."""
    config = write_config(servers("time"))
    db = f"sqlite:///{tmp_path / 'gw.db'}"

    async def scenario() -> None:
        async with stdio_gateway(config, db) as gw:
            for arguments in ({}, {"tools": 5}, {"query": ["not", "a", "string"]}):
                bad = await gw.call("load_tools", **arguments)
                assert bad.is_error and text(bad).startswith("Error: load_tools"), arguments
            good = await gw.call("load_tools", tools=["convert_time"])
            assert not good.is_error and "convert_time" in text(good)

    anyio.run(scenario)


def test_on_a_single_small_server_the_obvious_match_comes_first(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    """``mcp-server-time`` alone (two tools): asking for the current time loads that tool."""
    config = write_config(servers("time"))
    db = f"sqlite:///{tmp_path / 'gw.db'}"

    async def scenario() -> None:
        async with stdio_gateway(config, db) as gw:
            assert await gw.names() == META
            reply = await gw.call("load_tools", query="what is the current time in Tokyo")
            assert not reply.is_error
            assert (await gw.names())[len(META)] == "get_current_time", text(reply)

    anyio.run(scenario)
