"""Shared fixtures for the tooltray.tools tests: the hand-written sample catalog."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooltray.tools.importers.catalog import load_catalog
from tooltray.tools.spec import Bundle, ToolSpec

GOLDEN = Path(__file__).parent / "golden"
DATA = Path("/work/shared/data")


@pytest.fixture
def sample_path() -> Path:
    return GOLDEN / "sample_tools.jsonl"


@pytest.fixture
def sample(sample_path: Path) -> tuple[list[ToolSpec], list[Bundle]]:
    loaded: tuple[list[ToolSpec], list[Bundle]] = load_catalog(sample_path)
    return loaded


@pytest.fixture
def tools(sample: tuple[list[ToolSpec], list[Bundle]]) -> list[ToolSpec]:
    return sample[0]
