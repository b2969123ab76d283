"""Fixtures for the framework adapters: the scripted server of tests/agent, real trinkets.

Everything is real except the LLM: a SQLite file store, the default embedder, the trinket, the
catalog of real callables in tests/agent/catalog.py, and the framework's own OpenAI-compatible
model class talking HTTP to the scripted server on 127.0.0.1.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

AGENT_TESTS = Path(__file__).resolve().parent.parent / "agent"
if str(AGENT_TESTS) not in sys.path:
    sys.path.insert(0, str(AGENT_TESTS))
os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # no trace export off loopback

import agent_fixtures  # noqa: E402
import catalog  # noqa: E402
from agent_fixtures import TEST_SETTINGS, history  # noqa: E402

# The shared fixtures, registered in this folder.
server = agent_fixtures.server
db_url = agent_fixtures.db_url


@pytest.fixture
def make_trinket(db_url: str) -> Iterator[Callable[..., Any]]:
    """Build trinkets on one database (a second one is a restarted process); closed after."""
    from tooltray.memory.config import Settings
    from tooltray.memory.core.trinket import ToolLoaderTrinket
    from tooltray.memory.store import Store

    trinkets: list[Any] = []
    catalog.CALLS.clear()

    def build(registry: Any = None, **opts: Any) -> Any:
        settings = Settings(db=db_url, path="openai", **{**TEST_SETTINGS, **opts})
        reg = catalog.build_registry() if registry is None else registry
        trinket = ToolLoaderTrinket(reg, Store(db_url), settings=settings)
        trinkets.append(trinket)
        return trinket

    yield build
    for trinket in trinkets:
        trinket.close()


@pytest.fixture
def rows(db_url: str) -> Callable[..., list[tuple[Any, ...]]]:
    """``rows(session_id, kind=None)``: the session's stored history."""
    return lambda session_id, kind=None: history(db_url, session_id, kind)


@pytest.fixture
def completed() -> Iterator[list[tuple[str, int]]]:
    """Every ``turn-completed`` signal as (session, turn), while the test runs."""
    from tooltray.events import signals as sig

    seen: list[tuple[str, int]] = []

    def receiver(sender: Any, payload: Any, **_: Any) -> None:
        seen.append((str(sender), payload.turn))

    with sig.turn_completed.connected_to(receiver):
        yield seen
