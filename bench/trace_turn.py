"""Print the path one later turn takes through the public API (README "One turn").

``python bench/trace_turn.py [--db URL]``: a first turn on the demo catalog sets the session
up; the second turn is traced: ``prepare``, one ``load_tools`` query, ``tool-used``,
``turn-completed``. Printed: every ``tooltray.*`` module a function of it runs in (in the order
first entered, each with how many of its functions), the library functions it enters (distinct
code objects, comprehensions included), and per call the transactions begun, committed and the
session-row writes (counted by SQLAlchemy events, not by time).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

FIRST = "What's the weather in Paris tomorrow?"
LATER = "Book me a flight from Paris to Rome on Friday."
HOTEL = "book a hotel in Rome"


def entered(run: Callable[[], object]) -> list[str]:
    """The ``tooltray.*`` functions ``run`` calls (``module:qualname:line``), first entered
    first."""
    seen: dict[str, None] = {}

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        name = frame.f_globals.get("__name__", "")
        if event == "call" and name.startswith("tooltray."):
            code = frame.f_code
            seen.setdefault(f"{name}:{code.co_qualname}:{code.co_firstlineno}", None)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return list(seen)


def later_turn(db: str) -> list[str]:
    """Set up a session with one turn, then trace its second turn: the modules it enters."""
    return _modules_first(flow(db)["functions"])


def _modules_first(functions: list[str]) -> list[str]:
    return list(dict.fromkeys(f.split(":", 1)[0] for f in functions))


def flow(db: str) -> dict[str, Any]:
    """Set up a session with one turn, then trace its second turn: the library functions it
    enters (``module:qualname:line``, in the order first entered) and, per public call, the
    transactions it began and committed and how often it wrote the session row."""
    from sqlalchemy import event

    from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed
    from tooltray.memory import Settings, ToolLoaderTrinket
    from tooltray.tools.demo import demo_registry

    trinket = ToolLoaderTrinket(demo_registry(), settings=Settings(db=db))
    messages: list[dict[str, Any]] = [{"role": "user", "content": FIRST}]
    trinket.prepare("s", messages)
    emit(turn_completed, "s", TurnCompleted(message_count=len(messages)))
    messages += [{"role": "assistant", "content": "Sunny."}, {"role": "user", "content": LATER}]
    seen: list[str] = []
    engine = trinket.store.engine  # type: ignore[attr-defined]
    event.listen(engine, "begin", lambda conn: seen.append("begin"))
    event.listen(engine, "commit", lambda conn: seen.append("commit"))
    event.listen(engine, "before_cursor_execute", lambda *a: seen.append(_write(a[2])))
    calls: dict[str, Callable[[], object]] = {
        "prepare": lambda: trinket.prepare("s", messages),
        "load_tools": lambda: trinket.handle_meta("s", "load_tools", json.dumps({"query": HOTEL})),
        "tool-used": lambda: emit(tool_used, "s", ToolUsed(tool="travel_search_flights")),
        "turn-completed": lambda: emit(
            turn_completed, "s", TurnCompleted(message_count=len(messages))
        ),
    }
    functions: dict[str, None] = {}
    out: dict[str, Any] = {"calls": {}}
    quiet = logging.root.manager.disable
    logging.disable(logging.INFO)  # INFO logging (a test's caplog) adds the plan's log line
    try:
        for name, call in calls.items():
            seen.clear()
            functions.update(dict.fromkeys(entered(call)))
            counts = {k: seen.count(k) for k in ("begin", "commit", "session write")}
            out["calls"][name] = counts
    finally:
        logging.disable(quiet)
    out["functions"] = list(functions)
    return out


def _write(statement: str) -> str:
    return "session write" if statement.startswith("UPDATE sessions") else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", help="store URL (default: a SQLite file in a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        traced = flow(args.db or f"sqlite:///{Path(tmp) / 'trace.db'}")
    modules = _modules_first(traced["functions"])
    counts = Counter(f.split(":", 1)[0] for f in traced["functions"])
    print("\n".join(f"{counts[m]:4d} {m}" for m in modules))
    print(f"{len(modules)} modules, {len(traced['functions'])} library functions")
    for name, counts in traced["calls"].items():
        print(f"{name}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
