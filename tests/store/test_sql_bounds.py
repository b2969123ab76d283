"""``tooltray sql`` stops at its bounds: time, rows, output size, Ctrl-C; SQLite and PostgreSQL.

Before, a recursive CTE without an end ran until killed (Ctrl-C ignored for 20 s) and
``SELECT randomblob(100000000)`` printed 201 MB using 1.3 GB.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

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
    """The statement has no end: returning at all, with this error, is the time limit at work."""
    with pytest.raises(StoreError, match=r"ran longer than 1 s \(--timeout\)"):
        run_readonly(store_url, COUNT_FOREVER, seconds=1.0)


def test_an_endless_result_stops_at_the_row_limit(store_url: str) -> None:
    result = run_readonly(store_url, f"{ENDLESS} SELECT x FROM c", limit=50)
    assert [r[0] for r in result.rows] == list(range(1, 51)) and result.truncated


def test_a_huge_value_stops_at_the_output_limit(store_url: str) -> None:
    with pytest.raises(StoreError, match=r"passed 10,000,000 bytes \(--max-bytes\)"):
        run_readonly(store_url, huge_value(store_url))


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
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLTRAY_")}
    argv = ["sql", COUNT_FOREVER, "--db", store_url, "--timeout", "60"]
    proc = subprocess.Popen(
        [sys.executable, "-c", ANNOUNCED, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    until_running(proc, store_url)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=50)  # a hang guard below the 60 s limit, not a timing
    assert proc.returncode != 0 and err.strip() == (
        "error: query stopped: interrupted (Ctrl-C); nothing was changed"
    )


# The CLI in a child process that says "running" once SQLite is inside the statement (SQLite
# calls the bounds' progress check from the statement), so the SIGINT comes neither during
# start-up nor before the statement began, however loaded the machine is.
ANNOUNCED = textwrap.dedent(
    """
    import sys
    from tooltray.memory.cli.main import cli
    from tooltray.memory.cli.sqlconsole import limits

    expired = limits.Stop.expired

    def announced(self):
        if not getattr(self, "announced", False):
            self.announced = True
            print("running", flush=True)
        return expired(self)

    limits.Stop.expired = announced
    cli(sys.argv[1:])
    """
)
ACTIVE = (  # the statement runs in the FETCH of its server-side cursor
    "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() "
    "AND datname = current_database() AND (query LIKE 'FETCH%' OR query LIKE 'WITH RECURSIVE%')"
)


def until_running(proc: subprocess.Popen[str], url: str) -> None:
    """Wait until ``proc``'s statement runs: its "running" line (SQLite), or the server lists
    it as active (PostgreSQL runs it without calling back). Fails if the process ends first."""
    assert proc.stdout is not None
    if url.startswith("sqlite"):
        assert proc.stdout.readline().strip() == "running", proc.communicate()[1]
        return
    engine = create_engine(url)
    try:
        while proc.poll() is None:
            with engine.connect() as conn:
                if conn.execute(text(ACTIVE)).scalar():
                    return
            time.sleep(0.05)
    finally:
        engine.dispose()
    pytest.fail(f"the statement never ran: {proc.communicate()[1]}")
