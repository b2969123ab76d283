"""Reliability figures: run ``tests/reliability`` and report what was tried and what was lost.

``python bench/reliability.py [--quick] [--out DIR]`` (or ``bench/run.py reliability``) runs the
suite at full size (100+ SIGKILL trials, 4 processes x 500 turns per session kind and backend,
10,000 Hypothesis examples per target; ``--quick`` uses the CI sizes), prints one table row per
experiment and writes ``reliability.json``: every test's outcome and every experiment's figures.
PostgreSQL experiments need ``TOOLTRAY_TEST_PG_URL`` (``eval "$(bash .ci/pg.sh)"``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
COLUMNS = ("experiment", "test", "tried", "lost", "detail")
TESTS = {  # figures key prefix -> the test that produced it
    "crash": "test_sigkill_at_random_points",
    "concurrency": "test_concurrent_writers_end_where_a_serial_run_ends",
    "bad_input_meta_arguments": "test_meta_tool_arguments",
    "bad_input_tool_names": "test_tool_calls_by_name",
    "bad_input_json_schemas": "test_tool_definitions_are_refused_clearly_or_usable",
    "bad_input_schema_calls": "test_accepted_schemas_never_break_a_call",
    "bad_input_descriptions": "test_descriptions_of_any_size_and_alphabet",
    "bad_input_registrations": "test_registrations_never_shadow_a_tool",
    "bad_input_database_files": "test_damaged_files_are_refused_clearly_and_left_alone",
    "allowlist": "test_forbidden_tools_never_reach_the_model",
    "degradation_embedder": "test_embedder_failing_mid_session",
    "degradation_database": "test_database_unreachable_mid_session",
    "degradation_sqlite": "test_sqlite_locked_beyond_the_retry_budget",
    "sql_sqlite": "test_sqlite_attempts_that_would_succeed",
    "sql_postgres_reader": "test_postgres_read_only_role",
    "sql_postgres_default": "test_postgres_default_connection",
}


def _pytest(full: bool, figures: Path, junit: Path) -> int:
    argv = [sys.executable, "-m", "pytest", "tests/reliability", "-q", "-p", "no:cacheprovider"]
    argv += ["--figures", str(figures), f"--junitxml={junit}"]
    if full:
        argv.append("--full")
    pytest = Path(sys.executable).parent / "pytest"
    if pytest.exists():
        argv = [str(pytest), *argv[3:]]
    return subprocess.run(argv, cwd=ROOT, check=False).returncode


def _outcomes(junit: Path) -> dict[str, Any]:
    passed, failed, skipped = [], [], []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '').split('.')[-1]}::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(name)
        elif case.find("skipped") is not None:
            skipped.append(name)
        else:
            passed.append(name)
    return {"passed": len(passed), "failed": failed, "skipped": skipped}


def _status(key: str, failed: list[str]) -> str:
    prefix = next((TESTS[p] for p in sorted(TESTS, key=len, reverse=True) if key.startswith(p)), "")
    return "FAILED" if prefix and any(prefix in name for name in failed) else "passed"


def _row(key: str, fig: dict[str, Any], failed: list[str]) -> tuple[str, str, str, str, str]:
    return (key, _status(key, failed), *_cells(key, fig))


def _cells(key: str, fig: dict[str, Any]) -> tuple[str, str, str]:
    if key.startswith("crash"):
        tried = f"{fig['trials']} trials, {fig['kills']} kills, {fig['restarts']} restarts"
        return tried, str(fig["lost_or_duplicated"]), f"{fig['writes_in_reference']} writes/run"
    if key.startswith("concurrency"):
        tried = f"{fig['processes']} procs x {fig['turns_per_session']} turns x 2 sessions"
        detail = f"{fig['writes']} writes, {fig['retries']} retries, {fig['seconds']} s"
        return tried, str(fig["lost_or_different"]), detail
    if key.startswith("bad_input"):
        outcomes = ", ".join(f"{k}: {v}" for k, v in sorted(fig["outcomes"].items()))
        return f"{fig['examples']} examples", "-", outcomes[:80]
    lost = fig.get("lost", fig.get("leaked", fig.get("changed", fig.get("escaped", 0))))
    tried = fig.get("attempts", fig.get("turns", ""))
    detail = ", ".join(f"{k}={v}" for k, v in fig.items() if not isinstance(v, (list, dict)))
    return str(tried), str(lost), detail[:80]


def table(figures: dict[str, Any], failed: list[str]) -> str:
    """The figures as a plain-text table, one row per experiment ("test": did its test pass)."""
    rows = [COLUMNS] + [_row(k, v, failed) for k, v in figures.items() if isinstance(v, dict)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)


def run(data_dir: Path | None, out_dir: Path, quick: bool = False) -> dict[str, Any]:
    """Run the suite (full unless ``quick``) and return its figures and test outcomes."""
    with tempfile.TemporaryDirectory() as tmp:
        figures_path, junit = Path(tmp) / "figures.json", Path(tmp) / "junit.xml"
        start = time.perf_counter()
        code = _pytest(not quick, figures_path, junit)
        figures = json.loads(figures_path.read_text()) if figures_path.exists() else {}
        outcomes = _outcomes(junit) if junit.exists() else {"error": f"pytest exit {code}"}
    print(table(figures, list(outcomes.get("failed", []))))
    if outcomes.get("failed"):
        print("failed tests:\n  " + "\n  ".join(outcomes["failed"]))
    return {
        "full": not quick,
        "pytest_exit": code,
        "seconds": round(time.perf_counter() - start, 1),
        "tests": outcomes,
        "figures": figures,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="CI sizes instead of the full run")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    result = run(None, args.out, quick=args.quick)
    path = args.out / "reliability.json"
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0 if result["pytest_exit"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
