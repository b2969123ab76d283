"""Allow and deny entries name a tool as the user knows it, on every route of the real gateway.

Two copies of ``wipe_server.py`` both list ``wipe_disk`` and ``disk_usage``; the gateway shows
them as ``alpha_wipe_disk`` / ``beta_wipe_disk``. ``deny=["wipe_disk"]`` must hide and refuse
both (``tools/list``, ``load_tools`` by name, bundle, query and ``"*"``, the ``call_tool``
bridge, a direct call), over stdio and streamable HTTP; an entry naming nothing stops start-up.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from gateway_helpers import (
    HERE,
    Client,
    gateway_env,
    http_client,
    http_gateway,
    serve_args,
    stdio_gateway,
    text,
)

WIPE_SERVER = HERE / "wipe_server.py"


def two_servers() -> dict[str, Any]:
    """alpha and beta, two copies of one server (every tool name clashes)."""
    entry = {"command": sys.executable}
    return {
        "mcpServers": {
            "alpha": {**entry, "args": [str(WIPE_SERVER), "alpha"]},
            "beta": {**entry, "args": [str(WIPE_SERVER), "beta"]},
        }
    }


async def every_route_refuses_wipe(gw: Client, bridged: bool) -> None:
    """Neither wipe_disk is listed, loaded or run by any route; disk_usage still is."""
    for asked in (["*"], ["alpha", "beta"]):  # every tool, every member of both bundles
        answer = text(await gw.call("load_tools", tools=asked))
        assert "wipe_disk" not in answer
        names = await gw.names()
        assert not any("wipe_disk" in n for n in names)
        assert bridged or {"alpha_disk_usage", "beta_disk_usage"} <= set(names)
    for asked in (["wipe_disk"], ["alpha_wipe_disk"], ["beta/wipe_disk"]):
        answer = text(await gw.call("load_tools", tools=asked))
        assert "not allowed" in answer or "Unknown" in answer
        assert not any("wipe_disk" in n for n in await gw.names())
    queried = await gw.call("load_tools", query="erase every file on the disk")
    assert "wiped" not in text(queried)
    assert not any("wipe_disk" in n for n in await gw.names())
    for name in ("alpha_wipe_disk", "beta_wipe_disk", "wipe_disk"):
        direct = await gw.call(name, confirm=True)
        assert direct.is_error and "wiped" not in text(direct)
        if bridged:
            via = await gw.session.call_tool(
                "call_tool", {"name": name, "arguments": {"confirm": True}}
            )
            assert via.is_error and "wiped" not in text(via)
    usage = await gw.call("alpha_disk_usage")
    assert not usage.is_error and text(usage) == "alpha: 42% used"


def test_an_upstream_name_denies_the_tool_on_every_server_stdio(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(two_servers())
    db = f"sqlite:///{tmp_path / 'gw.db'}"

    async def scenario(*more: str) -> None:
        async with stdio_gateway(config, db, *more, TOOLTRAY_DENY='["wipe_disk"]') as gw:
            await every_route_refuses_wipe(gw, bridged=bool(more))

    anyio.run(scenario)
    anyio.run(scenario, "--reveal", "bridge")


def test_an_upstream_name_denies_the_tool_on_every_server_http(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(two_servers())
    db = f"sqlite:///{tmp_path / 'gw.db'}"

    async def scenario(url: str) -> None:
        async with http_client(url) as gw:
            await every_route_refuses_wipe(gw, bridged=False)

    with http_gateway(config, db, tmp_path / "gw.log", TOOLTRAY_DENY='["wipe_disk"]') as url:
        anyio.run(scenario, url)


def test_server_slash_tool_and_shown_names_deny_one_copy_and_allow_by_upstream_name(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(two_servers())
    db = f"sqlite:///{tmp_path / 'gw.db'}"

    async def scenario(env: dict[str, str], runs: str, refused: tuple[str, ...]) -> None:
        async with stdio_gateway(config, db, **env) as gw:
            await gw.call("load_tools", tools=["*"])
            ran = await gw.call(runs, confirm=True)
            assert not ran.is_error and "wiped" in text(ran)
            for name in refused:
                result = await gw.call(name, confirm=True)
                assert result.is_error and "wiped" not in text(result)
                assert name not in await gw.names()

    anyio.run(
        scenario, {"TOOLTRAY_DENY": '["alpha/wipe_disk"]'}, "beta_wipe_disk", ("alpha_wipe_disk",)
    )
    anyio.run(
        scenario, {"TOOLTRAY_DENY": '["beta_wipe_disk"]'}, "alpha_wipe_disk", ("beta_wipe_disk",)
    )
    allow = {"TOOLTRAY_ALLOW": '["wipe_disk"]'}
    anyio.run(scenario, allow, "alpha_wipe_disk", ("alpha_disk_usage", "beta_disk_usage"))


def test_an_entry_that_names_nothing_stops_start_up_with_the_closest_names(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(two_servers())
    args = serve_args(config, f"sqlite:///{tmp_path / 'gw.db'}")
    env = gateway_env(TOOLTRAY_DENY='["wipe_dsk"]')
    done = subprocess.run(
        [sys.executable, *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if "wipe_dsk" in line]
    assert len(lines) == 1 and "wipe_disk" in lines[0] and "Traceback" not in done.stderr
