"""The gateway fronts many MCP servers, whose tasks need a filesystem, a shell or fetch without
naming them: its ``generic`` default is ``detect`` (the library's is ``off``); a value the user
set stays."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from gateway_helpers import servers

from tooltray.memory.config import Settings
from tooltray.memory.gateway import load_config
from tooltray.memory.gateway.gateway import Gateway
from tooltray.memory.gateway.state import GatewayState


def test_the_gateway_detects_generic_tools_unless_told_otherwise(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = load_config(write_config(servers("math")))
    url = f"sqlite:///{tmp_path / 'gw.db'}"
    seen = []
    for settings in (Settings(db=url), Settings(db=url, generic="off")):
        gateway = Gateway(config, settings, GatewayState(None))
        seen.append(gateway.trinket.settings.generic)
        gateway.close()
    assert seen == ["detect", "off"] and Settings(db=url).generic == "off"
