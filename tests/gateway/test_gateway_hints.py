"""Selection over MCP: the user's text a client passes (``_meta`` or the ``X-Tooltray-Hint``
header), or a session's first ``load_tools`` query, reveals tools before the next call."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
from gateway_helpers import _client, http_client, http_gateway, servers, stdio_gateway
from mcp import types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

META = ["load_tools", "unload_tools", "fallback", "read_result"]
TIME_ASK = "What time is it in Tokyo right now, and what is 9:00 in Berlin in New York time?"
GIT_ASK = "Show me the git log of the repository: the last commits and who made them."


def selections(db: Path, session: str) -> int:
    """How many text-based selections the session's history records."""
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT count(*) FROM history WHERE session_id = ? AND kind = 'selected'", (session,)
        ).fetchone()
    return int(row[0])


def test_a_hint_on_the_first_call_is_revealed_before_the_next(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("time", "git"))
    db = tmp_path / "gw.db"

    async def run() -> tuple[list[str], int, int, list[str], int]:
        async with stdio_gateway(config, f"sqlite:///{db}", "--session", "s1") as gw:
            bare, seen = await gw.names(), gw.list_changed()
            meta: Any = {"tooltray/hint": GIT_ASK}
            await gw.session.call_tool("get_current_time", {"timezone": "UTC"}, meta=meta)
            notified = gw.list_changed()
            listed = await gw.names()
            await gw.session.call_tool("get_current_time", {"timezone": "UTC"}, meta=meta)
            return bare, seen, notified, listed, gw.list_changed()

    bare, seen, notified, listed, again = anyio.run(run)
    assert bare == META
    assert notified == seen + 1  # the notification came with the call's answer
    assert "git_log" in listed and listed[: len(META)] == META
    assert again == notified  # the same text again is the same turn: nothing new
    assert selections(db, "s1") == 1


def test_the_first_load_tools_query_seeds_selection(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("time", "git"))
    db = tmp_path / "gw.db"

    async def run() -> tuple[list[str], str, list[str]]:
        async with stdio_gateway(config, f"sqlite:///{db}", "--session", "s2") as gw:
            assert await gw.names() == META
            result = await gw.call("load_tools", query="server: git\ntool: commit history")
            answer = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
            first = await gw.names()
            await gw.call("load_tools", query=TIME_ASK)
            return first, answer, await gw.names()

    first, answer, second = anyio.run(run)
    assert "git_log" in answer and "git_log" in first
    assert selections(db, "s2") == 1  # the first query seeded it; the second is a search only
    assert "get_current_time" in second


def test_hints_over_http_reach_only_their_session_and_respect_deny(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("time", "git"))
    db = tmp_path / "gw.db"

    async def by_header(url: str) -> list[str]:
        http = create_mcp_http_client(headers={"X-Tooltray-Hint": quote(TIME_ASK + " (東京)")})
        transport = streamable_http_client(f"{url}?session=a", http_client=http)
        async with transport as (read, write), _client(read, write) as gw:
            return await gw.names()

    async def by_meta(url: str) -> list[str]:
        async with http_client(f"{url}?session=b") as gw:
            params = types.PaginatedRequestParams(_meta={"tooltray/hint": GIT_ASK})
            return [t.name for t in (await gw.session.list_tools(params=params)).tools]

    async def bare(url: str) -> list[str]:
        async with http_client(f"{url}?session=c") as gw:
            return await gw.names()

    async def run(url: str) -> tuple[list[str], list[str], list[str]]:
        return await by_header(url), await by_meta(url), await bare(url)

    with http_gateway(
        config, f"sqlite:///{db}", tmp_path / "gw.log", TOOLTRAY_DENY='["git_commit"]'
    ) as url:
        a, b, c = anyio.run(run, url)
    assert "get_current_time" in a and not any(n.startswith("git_") for n in a)
    assert "git_log" in b and "get_current_time" not in b and "git_commit" not in b
    assert c == META
    assert [selections(db, s) for s in "abc"] == [1, 1, 0]
