"""A small catalog of real callables in bundles, for the agent tests and ``tooltray chat``.

``build_registry()`` is the hook ``tooltray chat --catalog this_file.py`` calls. ``CALLS`` records
every call so tests can check a tool really ran (or never did).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import Bundle

CALLS: list[tuple[str, dict[str, Any]]] = []


def _log(name: str, **kwargs: Any) -> None:
    CALLS.append((name, kwargs))


def add(a: float, b: float) -> float:
    """Add two numbers and return the sum.

    Args:
        a: first number.
        b: second number.
    """
    _log("add", a=a, b=b)
    return a + b


def multiply(a: float, b: float) -> float:
    """Multiply two numbers and return the product.

    Args:
        a: first number.
        b: second number.
    """
    _log("multiply", a=a, b=b)
    return a * b


def word_count(text: str) -> int:
    """Count the words in a piece of text.

    Args:
        text: the text to count.
    """
    _log("word_count", text=text)
    return len(text.split())


def to_upper(text: str) -> str:
    """Convert text to upper case letters.

    Args:
        text: the text to convert.
    """
    _log("to_upper", text=text)
    return text.upper()


def weather_forecast(city: str, days: int = 1) -> dict[str, Any]:
    """Get the weather forecast (temperature, rain) for a city.

    Args:
        city: the city name.
        days: how many days ahead, 1 to 7.
    """
    _log("weather_forecast", city=city, days=days)
    return {"city": city, "days": days, "forecast": "sunny", "high_c": 21 + len(city) % 5}


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from degrees Celsius to Fahrenheit.

    Args:
        celsius: the temperature in Celsius.
    """
    _log("celsius_to_fahrenheit", celsius=celsius)
    return celsius * 9 / 5 + 32


def day_of_week(date: str) -> str:
    """Tell which weekday a calendar date (YYYY-MM-DD) falls on.

    Args:
        date: the date as YYYY-MM-DD.
    """
    _log("day_of_week", date=date)
    return dt.date.fromisoformat(date).strftime("%A")


def days_between(start: str, end: str) -> int:
    """Count the days between two calendar dates (YYYY-MM-DD).

    Args:
        start: the first date.
        end: the second date.
    """
    _log("days_between", start=start, end=end)
    return (dt.date.fromisoformat(end) - dt.date.fromisoformat(start)).days


def read_server_log(lines: int = 400) -> str:
    """Read the last lines of the server log file.

    Args:
        lines: how many lines to read.
    """
    _log("read_server_log", lines=lines)
    return "\n".join(f"2026-01-01T00:00:{i % 60:02d} INFO request {i} served" for i in range(lines))


def disk_usage(path: str) -> str:
    """Report disk usage of a folder on the server.

    Args:
        path: the folder.
    """
    _log("disk_usage", path=path)
    raise OSError(f"permission denied reading {path}")


def delete_all_files(confirm: bool) -> str:
    """Delete every file on the server permanently.

    Args:
        confirm: must be true.
    """
    _log("delete_all_files", confirm=confirm)
    return "deleted everything"


TOOLS = {
    "math": (add, multiply),
    "text": (word_count, to_upper),
    "weather": (weather_forecast, celsius_to_fahrenheit),
    "calendar": (day_of_week, days_between),
    "server": (read_server_log, disk_usage, delete_all_files),
}
BUNDLES = {
    "math": "arithmetic on numbers",
    "text": "word counts and case changes of text",
    "weather": "weather forecasts and temperature conversion",
    "calendar": "dates, weekdays and day counts",
    "server": "server logs, disk usage and file maintenance",
}


def build_registry(deny: tuple[str, ...] = ("delete_all_files",)) -> ToolRegistry:
    """A registry of every tool above (``delete_all_files`` denied unless ``deny=()``)."""
    registry = ToolRegistry(deny=set(deny))
    for bundle, fns in TOOLS.items():
        registry.add_bundle(Bundle(name=bundle, description=BUNDLES[bundle], members=()))
        for fn in fns:
            registry.register_callable(fn, bundle=bundle)
    return registry
