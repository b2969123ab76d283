"""Upstreams that fail to start or die mid-call degrade the gateway to the others, then return."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import anyio
from gateway_helpers import servers, stdio_gateway, text


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
