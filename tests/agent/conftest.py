"""Shared fixtures for the agent tests: helper modules importable, a scripted server, agents.

Every agent here is real: a SQLite file store, the default embedder, the trinket, the registry
of ``catalog.py`` (real callables), and the ``openai`` client over HTTP to a scripted server.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import agent_fixtures  # noqa: E402
import catalog  # noqa: E402
from agent_fixtures import TEST_SETTINGS, history  # noqa: E402, F401
from scripted_server import ScriptedServer  # noqa: E402

MCP_SERVER = HERE / "mcp_server.py"
CATALOG = HERE / "catalog.py"


# The shared fixtures, registered in this folder.
server = agent_fixtures.server
db_url = agent_fixtures.db_url


@pytest.fixture
def make_agent(server: ScriptedServer, db_url: str) -> Iterator[Callable[..., Any]]:
    """Build agents on the scripted server; their trinkets are closed after the test."""
    from openai import OpenAI

    from tooltray.memory.agent.loop import Agent
    from tooltray.memory.config import Settings
    from tooltray.memory.core.trinket import ToolLoaderTrinket
    from tooltray.memory.store import Store

    trinkets: list[Any] = []
    catalog.CALLS.clear()

    def build(
        registry: Any = None, *, path: str = "openai", max_steps: int = 8, **opts: Any
    ) -> Any:
        settings = Settings(db=db_url, path=path, **{**TEST_SETTINGS, **opts})
        reg = registry if registry is not None else catalog.build_registry()
        trinket = ToolLoaderTrinket(reg, Store(db_url), settings=settings)
        trinkets.append(trinket)
        client = OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        return Agent(trinket, client, "scripted", path=path, max_steps=max_steps)

    yield build
    for trinket in trinkets:
        trinket.close()
