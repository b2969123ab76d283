"""Tools registered at run time: near duplicates are logged and recorded, never refused."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.store import Store
from tooltray.tools.registry import ToolRegistry

TWIN = "Send an email message to a recipient address with a subject and body."


@pytest.fixture
def trinket(tmp_path: Path, diverse: list[Any], make: Any) -> Iterator[ToolLoaderTrinket]:
    url = f"sqlite:///{tmp_path / 'tt.db'}"
    registry = ToolRegistry([*diverse, make("send_email", TWIN)])
    trinket = ToolLoaderTrinket(registry, Store(url), settings=Settings(db=url))
    trinket.start("s1", [{"role": "user", "content": "what is the weather in Paris?"}])
    yield trinket
    trinket.close()


def _recorded(trinket: ToolLoaderTrinket) -> list[Any]:
    assert trinket.store is not None
    return [e for e in trinket.store.history("s1") if e.kind == "near-duplicate"]


def test_twin_is_registered_logged_and_recorded(
    trinket: ToolLoaderTrinket, make: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="tooltray"):
        trinket.registry.register(make("send_mail", TWIN))
    assert trinket.registry.get("send_mail") is not None  # never a refusal
    (event,) = _recorded(trinket)
    assert event.tool in {"send_mail", "send_email"} and "same description" in (event.detail or "")
    assert "near duplicate of" in caplog.text


def test_distinct_tool_records_nothing(trinket: ToolLoaderTrinket, make: Any) -> None:
    text = "List the newest messages received in the user's inbox folder."
    trinket.registry.register(make("read_inbox", text))
    assert _recorded(trinket) == []


def test_closed_trinket_stops_listening(trinket: ToolLoaderTrinket, make: Any) -> None:
    trinket.close()
    trinket.registry.register(make("send_mail", TWIN))
    assert _recorded(trinket) == []
