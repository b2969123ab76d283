"""A hung upstream (alive, answering nothing) is noticed by its pings and restarted.

The gateway runs in this process here (short ping interval and call timeout), driving a real
MCP server process whose ``hang`` tool blocks its event loop.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import anyio
import pytest
from gateway_helpers import servers

from tooltray.memory.config import Settings
from tooltray.memory.gateway import Gateway, parse_config


def test_a_hung_upstream_times_out_is_restarted_and_answers_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = parse_config(servers("flaky"))
    settings = Settings(db=f"sqlite:///{tmp_path / 'gw.db'}")
    gateway = Gateway(config, settings, call_timeout=1.0, ping_interval=0.5, backoff=0.2)
    caplog.set_level(logging.ERROR, logger="tooltray.gateway")

    async def scenario() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(gateway.run)
            first, _ = await gateway.call("h1", "echo_back", {"text": "a"})
            hung, _ = await gateway.call("h1", "hang", {})
            assert hung.is_error and "'flaky' gave no answer to 'hang'" in _text(hung)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                again, _ = await gateway.call("h1", "echo_back", {"text": "b"})
                if not again.is_error:
                    break
                await anyio.sleep(0.2)
            assert not again.is_error
            assert _pid(again) != _pid(first)  # a new server process answers
            tg.cancel_scope.cancel()

    try:
        anyio.run(scenario)
    finally:
        gateway.close()
    assert any("'flaky' died" in r.message and "hung" in r.message for r in caplog.records)


def _pid(result: object) -> str:
    return _text(result).rsplit("pid ", 1)[1]


def _text(result: object) -> str:
    return "".join(getattr(b, "text", "") for b in getattr(result, "content", []))
