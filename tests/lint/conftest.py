"""Small hand-made catalogs for the lint checks, and the real embedder."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from tooltray.memory.embedders import default_embedder
from tooltray.tools.spec import ToolSpec


def spec(name: str, description: str, bundle: str | None = None, **params: Any) -> ToolSpec:
    """A tool with string parameters; a parameter's value is its description (``None``: none)."""
    props = {
        k: {"type": "string"} if v is None else {"type": "string", "description": v}
        for k, v in params.items()
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return ToolSpec(
            name=name,
            description=description,
            bundle=bundle,
            parameters={"type": "object", "properties": props},
        )


DIVERSE = [
    ("get_weather", "Current weather and temperature for a city, with wind and humidity."),
    ("book_flight", "Book a plane ticket between two airports on a given date."),
    ("translate_text", "Translate a passage of text from one language into another."),
    ("convert_currency", "Convert an amount of money between two currencies at today's rate."),
    ("create_calendar_event", "Add a meeting to the user's calendar with a title and time."),
    ("search_recipes", "Find cooking recipes that use the given ingredients."),
    ("get_stock_price", "Latest trading price of a stock ticker on the exchange."),
    ("play_song", "Start playing a song by title or artist on the music player."),
    ("set_alarm", "Set an alarm clock to ring at a given time of day."),
    ("find_restaurant", "Search nearby restaurants by cuisine, price and rating."),
    ("compress_files", "Pack a folder of files into a zip archive on disk."),
    ("count_words", "Count the words, lines and characters of a document."),
]


@pytest.fixture
def make() -> Any:
    """:func:`spec`, for tests (importlib mode does not import conftest by name)."""
    return spec


@pytest.fixture
def write() -> Any:
    """:func:`write_catalog`, for tests."""
    return write_catalog


@pytest.fixture
def diverse() -> list[ToolSpec]:
    """Twelve unrelated tools: the background a near-duplicate must stand out from."""
    return [spec(n, d) for n, d in DIVERSE]


@pytest.fixture(scope="session")
def embedder() -> Any:
    """The real offline MiniLM embedder."""
    return default_embedder()


def write_catalog(path: Path, rows: list[dict[str, Any]]) -> Path:
    """A tools.jsonl file with one JSON object per line."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
