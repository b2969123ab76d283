"""Fixtures for the gateway tests; the helpers live in ``gateway_helpers.py``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

pytest.importorskip("mcp")


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[..., Path]:
    """Write a config file; returns its path."""

    def write(data: dict[str, Any], name: str = "servers.json") -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    return write


@pytest.fixture(autouse=True)
def own_gateway_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's gateway keeps its pins and owners in its own file: on PostgreSQL the default
    is ``./tooltray-gateway.json``, which tests run side by side would share and leave behind."""
    monkeypatch.setenv("TOOLTRAY_GATEWAY_STATE", str(tmp_path / "gateway-state.json"))
