"""Upstreams that fail to start or die mid-call degrade the gateway to the others, then return."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio
from gateway_helpers import (
    FLAKY_SERVER,
    free_port,
    servers,
    stdio_gateway,
    text,
    wait_listening,
)


def test_a_crashing_upstream_does_not_take_the_gateway_down(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("math", "flaky", "broken", always=("flaky",)))
    db = f"sqlite:///{tmp_path / 'gw.db'}"
    log = tmp_path / "gateway.log"

    async def scenario() -> None:
        with log.open("w") as errlog:
            async with stdio_gateway(config, db, errlog=errlog) as gw:
                assert "echo_back" in await gw.names()
                crashed = await gw.call("crash")
                assert crashed.is_error and "'flaky'" in text(crashed)
                assert text(await gw.call("add_numbers", a=2, b=2)) == "4"  # the others serve
                assert await _comes_back(gw), "flaky never came back"
                assert "echo_back" in await gw.names()

    anyio.run(scenario)
    lines = log.read_text().splitlines()
    broken = [ln for ln in lines if "'broken' failed to start" in ln]
    assert broken and "serving the others" in broken[0]
    assert any("'flaky' died" in ln for ln in lines)


async def _comes_back(gw: object, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = await gw.call("echo_back", text="hi")  # type: ignore[attr-defined]
        if not result.is_error:
            return text(result).startswith("hi (pid")
        assert "'flaky'" in text(result)  # while down, the error names the server
        await anyio.sleep(0.3)
    return False


def test_a_remote_streamable_http_upstream_is_forwarded_to(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    port = free_port()
    remote = subprocess.Popen([sys.executable, str(FLAKY_SERVER), "--http", str(port)])
    try:
        wait_listening(port, remote)
        config = write_config({"mcpServers": {"remote": {"url": f"http://127.0.0.1:{port}/mcp"}}})
        db = f"sqlite:///{tmp_path / 'gw.db'}"

        async def scenario() -> None:
            async with stdio_gateway(config, db) as gw:
                echoed = await gw.call("echo_back", text="over http")
                assert text(echoed) == f"over http (pid {remote.pid})"
                assert (await gw.names())[-1] == "echo_back"

        anyio.run(scenario)
    finally:
        remote.terminate()
        remote.wait(timeout=20)
