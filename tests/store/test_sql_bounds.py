"""``tooltray sql`` stops at its bounds: time, rows, output size, Ctrl-C; SQLite and PostgreSQL.

Before, a recursive CTE without an end ran until killed (Ctrl-C ignored for 20 s) and
``SELECT randomblob(100000000)`` printed 201 MB using 1.3 GB.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from tooltray.memory.cli import db as db_cli
from tooltray.memory.cli.main import cli
from tooltray.memory.cli.sqlconsole import limits as sql_limits
from tooltray.memory.cli.sqlconsole.sql import run_readonly
from tooltray.memory.store import Store
from tooltray.tools.errors import StoreError

ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
COUNT_FOREVER = f"{ENDLESS} SELECT count(*) FROM c"


def huge_value(url: str) -> str:
    """One value of 100 MB (SQLite) or 40 MB (PostgreSQL's repeat)."""
    if url.startswith("sqlite"):
        return "SELECT randomblob(100000000)"
    return "SELECT repeat('x', 40000000)"


@pytest.fixture
def store_url(db_url: str) -> str:
    Store(db_url).close()
    return db_url


def test_an_endless_statement_stops_at_the_time_limit(store_url: str) -> None:
    start = time.monotonic()
    with pytest.raises(StoreError, match=r"ran longer than 1 s \(--timeout\)"):
        run_readonly(store_url, COUNT_FOREVER, seconds=1.0)
    assert time.monotonic() - start < 6


def test_an_endless_result_stops_at_the_row_limit(store_url: str) -> None:
    result = run_readonly(store_url, f"{ENDLESS} SELECT x FROM c", limit=50)
    assert [r[0] for r in result.rows] == list(range(1, 51)) and result.truncated


def test_a_huge_value_stops_at_the_output_limit(store_url: str) -> None:
    start = time.monotonic()
    with pytest.raises(StoreError, match=r"passed 10,000,000 bytes \(--max-bytes\)"):
        run_readonly(store_url, huge_value(store_url))
    assert time.monotonic() - start < 10


def test_many_small_rows_stop_at_the_output_limit(store_url: str) -> None:
    query = f"{ENDLESS} SELECT x, 'abcdefghij' AS pad FROM c"
    with pytest.raises(StoreError, match="passed 1,000 bytes"):
        run_readonly(store_url, query, limit=10_000, max_bytes=1000)
    assert len(run_readonly(store_url, query, limit=20, max_bytes=1000).rows) == 20


def test_a_statement_that_is_not_a_query_still_runs_bounded(store_url: str) -> None:
    statement = "PRAGMA user_version" if store_url.startswith("sqlite") else "SHOW TimeZone"
    assert len(run_readonly(store_url, statement, seconds=5).rows) == 1


def test_the_cli_flags_set_the_bounds(store_url: str) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["sql", COUNT_FOREVER, "--db", store_url, "--timeout", "0.5"])
    assert result.exit_code == 2 and "ran longer than 0.5 s" in result.stderr
    query = "SELECT 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'"
    result = runner.invoke(cli, ["sql", query, "--db", store_url, "--max-bytes", "10"])
    assert result.exit_code == 2 and "passed 10 bytes" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_cli_defaults_are_the_store_defaults() -> None:
    assert db_cli.DEFAULT_SECONDS == sql_limits.DEFAULT_SECONDS
    assert db_cli.DEFAULT_MAX_BYTES == sql_limits.DEFAULT_MAX_BYTES
    assert db_cli.DEFAULT_LIMIT == sql_limits.DEFAULT_ROWS


def test_ctrl_c_stops_a_running_statement_at_once(store_url: str) -> None:
    """A real process and a real SIGINT, while the statement runs (a 60 s time limit)."""
    code = (
        "import sys; from tooltray.memory.cli.main import cli; "
        f"cli(['sql', {COUNT_FOREVER!r}, '--db', {store_url!r}, '--timeout', '60'])"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLTRAY_")}
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stderr=subprocess.PIPE, text=True, env=env
    )
    time.sleep(3.0)  # start-up and the connection, then the statement is running
    assert proc.poll() is None, proc.communicate()[1]
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 3, err
    assert proc.returncode != 0 and err.strip() == (
        "error: query stopped: interrupted (Ctrl-C); nothing was changed"
    )
