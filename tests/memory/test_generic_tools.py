"""Generic tools on a never-seen catalog: the tool nearest each generic capability (run code, a
shell, read or write a file, fetch a URL) is a boundary candidate before the deployment has a
record, so a session whose message never names it still finds it loaded; the record, once it
has sessions, decides instead. Real MCP servers' tool lists, the real embedder, SQLite files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from mcp_catalog import servers_catalog

from tooltray.memory.cli.main import cli
from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.learning.generic import generic_tools
from tooltray.memory.learning.usage import Prior, Usage, priors
from tooltray.memory.retrieval.selector import SessionSignals
from tooltray.memory.store import Store
from tooltray.memory.tuning import GENERIC_CHANCE, USAGE_MIN_SESSIONS
from tooltray.tools.demo import demo_registry
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec

from .conftest import finish_turn, user, write_catalog

NEW = "Will it rain in Paris this weekend?"  # names no file, page or command
PAST = "What's the weather in Oslo tomorrow?"


def specs() -> list[ToolSpec]:
    """The demo catalog (weather, travel, email, ...) beside the filesystem and fetch servers."""
    return [*demo_registry().allowed(), *servers_catalog("filesystem", "fetch")]


def trinket(url: str, generic: str = "detect", **settings: object) -> ToolLoaderTrinket:
    chosen = Settings(db=url, generic=generic, **settings)  # the library's default is "off"
    return ToolLoaderTrinket(ToolRegistry(specs()), Store(url), settings=chosen)


def opening(made: ToolLoaderTrinket, sid: str) -> dict[str, str]:
    """What a new session's first prepare loads, with each tool's source."""
    made.prepare(sid, [user(NEW)])
    snapshot = made.store.snapshot(sid)
    assert snapshot is not None
    return {t.name: t.source for t in snapshot.loaded}


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'tooltray.db'}"


def test_each_capability_names_the_tool_that_stands_out_and_none_elsewhere() -> None:
    made = trinket("sqlite://", embed_catalog="wait")
    try:
        made.prepare("s", [user(NEW)])
        known = made.catalog.priors(SessionSignals(made.catalog.signals, "s"))
        found = {name: p.capability for name, p in known.items() if p.capability is not None}
    finally:
        made.close()
    assert found.get("write_file") == "write text to a file"
    assert found.get("fetch") == "fetch a web page from a URL"
    assert not {"weather_forecast", "email_send", "list_directory"} & set(found)
    vectors = np.eye(4, dtype=np.float32)  # four unrelated tools: no capability stands out
    assert generic_tools(vectors, list("abcd"), lambda _: np.full(4, 0.5, np.float32)) == {}
    assert generic_tools(vectors, list("abcd"), lambda _: None) == {}  # no embedder: none


def test_a_first_session_holds_the_generic_tools_its_message_never_names(url: str) -> None:
    on, off = trinket(url), trinket(url.replace(".db", "-off.db"), generic="off")
    try:
        with_generic, without = opening(on, "first"), opening(off, "first")
    finally:
        on.close()
        off.close()
    assert with_generic.get("write_file") == "implicit" and with_generic.get("fetch") == "implicit"
    assert "weather_forecast" in with_generic  # the message's own tools still load
    assert "write_file" not in without and "fetch" not in without


def test_the_record_decides_once_it_has_sessions(url: str) -> None:
    """Sessions that never used the generic tools: once there are ``USAGE_MIN_SESSIONS`` of
    them, the catalog's guess gives way and a new session no longer holds them."""
    made = trinket(url)
    try:
        for i in range(USAGE_MIN_SESSIONS + 1):
            made.prepare(f"past-{i}", [user(PAST)])
            finish_turn(f"past-{i}", 1, ["weather_forecast"])
        later = opening(made, "later")
    finally:
        made.close()
    assert "weather_forecast" in later
    assert "write_file" not in later and "fetch" not in later


def test_a_declared_or_learned_chance_above_the_guess_wins() -> None:
    bundle_of: dict[str, str | None] = {"write_file": "filesystem", "fetch": "fetch"}
    generic = {"write_file": "write text to a file", "fetch": "fetch a web page from a URL"}
    out = priors(Usage([]), {"write_file": 0.5}, bundle_of, generic=generic)
    assert out["write_file"] == Prior(0.5, "implicit")  # the user's word over the guess
    assert out["fetch"].chance == GENERIC_CHANCE and out["fetch"].capability == generic["fetch"]
    assert priors(Usage([]), {}, bundle_of) == {}  # no guess passed (generic = "off"): none


def test_explain_says_which_capability_loaded_a_tool(tmp_path: Path) -> None:
    catalog = write_catalog(tmp_path / "tools.jsonl", specs())
    db = f"sqlite:///{tmp_path / 'explain.db'}"
    Store(db).close()
    args = ["explain", NEW, "--catalog", str(catalog), "--db", db, "--format", "json"]
    run = CliRunner().invoke(cli, args, env={"TOOLTRAY_GENERIC": "detect"})
    assert run.exit_code == 0, run.output
    decisions = {r["tool"]: r["decision"] for r in json.loads(run.stdout)}
    assert decisions["fetch"].startswith(
        f"loads (generic capability 'fetch a web page from a URL', chance {GENERIC_CHANCE:.2f}"
    )
    off = CliRunner().invoke(cli, args)  # the library's default: off
    assert off.exit_code == 0, off.output
    assert "generic capability" not in off.stdout
