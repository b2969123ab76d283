"""Run one benchmark suite: ``python bench/run.py SUITE [--data DIR] [--out DIR] [--quick]``.

Each suite is a module in this folder with ``run(data_dir, out_dir, quick=False) -> dict``. The
dispatcher prints the suite's table (the suite does), writes ``OUT/SUITE.json`` and exits.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUITES: dict[str, str] = {
    "retrieval": "retrieval",
    "ttft": "ttft",
    "store": "store_bench",
    "cost": "cost",
    "session": "session",
    "latency_turn": "latency_turn",
    "latency": "latency",
    "trinket": "trinket_bench",
    "reliability": "reliability",
    "startup": "startup",
    "gateway": "gateway",
    "deferral": "deferral",
    "needed": "needed",
    "reprocess": "reprocess",
    "frontier": "frontier",
    "bounds": "bounds",
    "retention": "retention",
    "mcp_search": "mcp_search",
    "menu_budget": "menu_budget",
    "first_minute": "first_minute",
    "gateway_follow": "gateway_follow",
}
DEFAULT_DATA = HERE.parent.parent / "shared" / "data"


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run the suite, write its JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("suite", choices=sorted(SUITES))
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="corpus folder(s) root")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    known, _ = parser.parse_known_args(argv)
    os.environ.setdefault("TOOLTRAY_EMBED_CATALOG", "wait")  # figures independent of timing
    os.environ.setdefault("TOOLTRAY_CACHE", "off")  # and of what the machine embedded before
    sys.path.insert(0, str(HERE))
    module = importlib.import_module(SUITES[known.suite])
    if hasattr(module, "add_arguments"):  # a suite with its own flags (e.g. session --corpus)
        module.add_arguments(parser)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    if hasattr(module, "run_args"):
        result = module.run_args(args.data, args.out, args)
    else:
        result = module.run(args.data, args.out, quick=args.quick)
    result = {"suite": args.suite, "seconds": round(time.perf_counter() - start, 1), **result}
    path = args.out / f"{args.suite}.json"
    path.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
