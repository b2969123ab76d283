"""Print the library modules one later turn enters, through the public API (README "One turn").

``python bench/trace_turn.py [--db URL]``: a first turn on the demo catalog sets the session
up; the second turn is traced: ``prepare``, one ``load_tools`` query, ``tool-used``,
``turn-completed``. Every ``tooltray.*`` module a Python function of it runs in is printed, in
the order first entered, then the count (the issue-24 target is at most 20).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

FIRST = "What's the weather in Paris tomorrow?"
LATER = "Book me a flight from Paris to Rome on Friday."


def entered(run: Callable[[], None]) -> list[str]:
    """The ``tooltray.*`` modules whose functions ``run`` calls, in the order first entered."""
    seen: dict[str, None] = {}

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        name = frame.f_globals.get("__name__", "")
        if event == "call" and name.startswith("tooltray.") and name not in seen:
            seen[name] = None

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return list(seen)


def later_turn(db: str) -> list[str]:
    """Set up a session with one turn, then trace its second turn."""
    from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed
    from tooltray.memory import Settings, ToolLoaderTrinket
    from tooltray.tools.demo import demo_registry

    trinket = ToolLoaderTrinket(demo_registry(), settings=Settings(db=db))
    messages: list[dict[str, Any]] = [{"role": "user", "content": FIRST}]
    trinket.prepare("s", messages)
    emit(turn_completed, "s", TurnCompleted(message_count=len(messages)))
    messages += [{"role": "assistant", "content": "Sunny."}, {"role": "user", "content": LATER}]

    def turn() -> None:
        trinket.prepare("s", messages)
        trinket.handle_meta("s", "load_tools", json.dumps({"query": "book a hotel in Rome"}))
        emit(tool_used, "s", ToolUsed(tool="travel_search_flights"))
        emit(turn_completed, "s", TurnCompleted(message_count=len(messages)))

    return entered(turn)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", help="store URL (default: a SQLite file in a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        modules = later_turn(args.db or f"sqlite:///{Path(tmp) / 'trace.db'}")
    print("\n".join(modules))
    print(f"{len(modules)} modules")


if __name__ == "__main__":
    main()
