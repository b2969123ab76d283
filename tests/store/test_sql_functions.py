"""``tooltray sql`` bounds its own SQL functions too: a backtracking REGEXP stops at --timeout
and at Ctrl-C (it used to run until SIGKILL: SQLite's progress handler and interrupt do not
reach inside a Python function). SQLite only: on PostgreSQL ``~`` runs on the server, under
``statement_timeout``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tooltray.memory.cli.sqlconsole.sql import run_readonly
from tooltray.memory.store import Store
from tooltray.tools.errors import StoreError

BACKTRACKS = "SELECT regexp('(a|aa)+$', printf('%.60c', 'a') || 'b')"
"""Hours of backtracking for the stdlib ``re`` (and for the ``regex`` package)."""
HANG = 300
"""Seconds after which the test gives up on a process (only reached when the bound is broken)."""


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'tooltray.db'}"
    Store(url).close()
    return url


def _cli(url: str, timeout: str, ready: bool = False) -> subprocess.Popen[str]:
    """``tooltray sql BACKTRACKS`` in a process; ``ready`` prints a line when REGEXP starts."""
    code = textwrap.dedent(
        f"""
        import sys
        from tooltray.memory.cli.sqlconsole import guard
        from tooltray.memory.cli.main import cli
        if {ready!r}:
            plain = guard._regexp
            def announced(pattern, value):
                print("in regexp", flush=True)
                return plain(pattern, value)
            guard._regexp = announced
        cli(["sql", {BACKTRACKS!r}, "--db", {url!r}, "--timeout", {timeout!r}])
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLTRAY_")}
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_a_backtracking_regexp_stops_at_the_time_limit(store_url: str) -> None:
    with pytest.raises(StoreError, match=r"ran longer than 0.5 s \(--timeout\)"):
        run_readonly(store_url, BACKTRACKS, seconds=0.5)
    assert run_readonly(store_url, "SELECT regexp('^a+b$', 'aab')").rows == [(1,)]


def test_the_cli_stops_a_backtracking_regexp_at_its_timeout(store_url: str) -> None:
    proc = _cli(store_url, "1")
    _, err = proc.communicate(timeout=HANG)
    assert proc.returncode != 0 and "ran longer than 1 s (--timeout)" in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_ctrl_c_stops_a_backtracking_regexp(store_url: str) -> None:
    proc = _cli(store_url, str(HANG * 10), ready=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "in regexp", proc.communicate()[1]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=HANG)
    assert proc.returncode != 0 and err.strip() == (
        "error: query stopped: interrupted (Ctrl-C); nothing was changed"
    )
