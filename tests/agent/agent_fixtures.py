"""Fixtures shared by the agent and the adapter tests: the scripted server, a SQLite file, rows.

Both conftests import them from here (a fixture imported into a conftest is registered there), so
the two suites run on the same small caps and read history the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted_server import ScriptedServer

# Small caps so selection really leaves tools out of a small catalog (the share opening: the priced
# one loads a catalog this small whole); loads join tools= (the prefix reveal), which these
# suites pin request by request. tests/agent/test_agent_reveal.py runs the loop on the defaults.
TEST_SETTINGS: dict[str, Any] = {
    "max_tools": 2,
    "activation_share": 0.0,
    "opening": "share",
    "reveal": "prefix",
    "growth": "never",
    "instructions": "You are a test assistant.",
}


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """A scripted OpenAI-compatible server; tests add steps with ``server.extend``."""
    with ScriptedServer() as srv:
        yield srv


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """A fresh SQLite file."""
    return f"sqlite:///{tmp_path / 'tooltray.db'}"


def history(db_url: str, session_id: str, kind: str | None = None) -> list[tuple[Any, ...]]:
    """(turn, kind, tool, detail) rows of a session's history, straight from the database."""
    import sqlalchemy as sa

    engine = sa.create_engine(db_url)
    sql = "SELECT turn, kind, tool, detail FROM history WHERE session_id = :s ORDER BY id"
    with engine.connect() as conn:
        rows = [tuple(r) for r in conn.execute(sa.text(sql), {"s": session_id})]
    engine.dispose()
    return [r for r in rows if kind is None or r[1] == kind]
