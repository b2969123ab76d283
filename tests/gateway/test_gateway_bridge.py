"""The gateway with ``reveal: bridge``: ``tools/list`` stays the same between boundaries.

A real ``tooltray mcp serve`` (stdio with ``--reveal bridge``, HTTP with the config key) in
front of the real ``mcp-server-time``: a load sends no ``list_changed`` and leaves ``tools/list``
byte-identical, the ``load_tools`` answer lists what loaded, and ``call_tool`` runs the upstream
tool through the same route as a direct call (allow-list and errors included).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from gateway_helpers import Client, http_client, http_gateway, servers, stdio_gateway, text

from tooltray.memory.metatools.meta_tools import shown_meta_specs

SHOWN = [s.name for s in shown_meta_specs("append")]  # load_tools, call_tool
TOKYO = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}


async def listing(gw: Client) -> list[dict[str, Any]]:
    """The whole ``tools/list`` answer, as the client would put it in its prompt."""
    return [t.model_dump(mode="json") for t in (await gw.session.list_tools()).tools]


async def bridge(gw: Client, name: str, arguments: Any) -> Any:
    return await gw.session.call_tool("call_tool", {"name": name, "arguments": arguments})


def test_bridge_keeps_tools_list_fixed_and_call_tool_reaches_the_upstream(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("time"))
    db = f"sqlite:///{tmp_path / 'gw.db'}"

    async def scenario() -> None:
        env = {"TOOLTRAY_DENY": '["get_current_time"]'}
        async with stdio_gateway(config, db, "--reveal", "bridge", **env) as gw:
            before = await listing(gw)
            assert [t["name"] for t in before] == SHOWN
            seen = gw.list_changed()

            loaded = await gw.call("load_tools", tools=["convert_time"])
            assert not loaded.is_error
            assert "Tools now available" in text(loaded) and "convert_time(" in text(loaded)
            assert "call_tool" in text(loaded)  # how to call it: it is not in tools/list
            assert await listing(gw) == before and gw.list_changed() == seen

            converted = await bridge(gw, "convert_time", TOKYO)
            assert not converted.is_error
            assert "21:00" in json.loads(text(converted))["target"]["datetime"]

            bad = await bridge(gw, "convert_time", {"time": 12})
            assert bad.is_error and "bad arguments for convert_time" in text(bad)
            denied = await bridge(gw, "get_current_time", {"timezone": "UTC"})
            assert denied.is_error and "datetime" not in text(denied)
            for wrong in ({"name": "no_such_tool"}, {"arguments": {}}, {"name": "call_tool"}):
                refused = await gw.session.call_tool("call_tool", wrong)
                assert refused.is_error, wrong

            unloaded = await bridge(gw, "unload_tools", {"tools": ["convert_time"]})  # not listed
            assert not unloaded.is_error and "convert_time" in text(unloaded)
            assert await listing(gw) == before and gw.list_changed() == seen

            every = await gw.call("load_tools", tools=["*"])  # the fallback, not a listed tool
            assert not every.is_error and "this turn only" in text(every)
            assert "convert_time(" in text(every) and "get_current_time" not in text(every)
            assert await listing(gw) == before and gw.list_changed() == seen

    anyio.run(scenario)


def test_bridge_over_http_from_the_config_and_a_boundary_folds_what_was_used(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config({**servers("time"), "tooltray": {"reveal": "bridge"}})
    db = f"sqlite:///{tmp_path / 'gw.db'}"

    async def session(url: str) -> tuple[list[str], list[str]]:
        async with http_client(f"{url}?session=b1") as gw:
            first = await gw.names()
            converted = await bridge(gw, "convert_time", TOKYO)  # an escape: never loaded
            assert not converted.is_error and "21:00" in text(converted)
            assert await gw.names() == first and gw.list_changed() == 0
        async with http_client(f"{url}?session=b1") as again:  # initialize: a boundary
            return first, await again.names()

    with http_gateway(config, db, tmp_path / "gateway.log") as url:
        first, resumed = anyio.run(session, url)
    assert first == SHOWN
    assert resumed == [*SHOWN, "convert_time"]  # used, so in the new prefix
