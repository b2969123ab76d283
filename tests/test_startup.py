"""Start-up stays fast: the CLI and ``import tooltray.memory`` load only what a command needs."""

from __future__ import annotations

import importlib
import json
import sqlite3
import subprocess
import sys

import click
import pytest

import tooltray.memory
from tooltray.memory.cli import catalog as catalog_cli
from tooltray.memory.cli import db as db_cli

HEAVY = ("onnxruntime", "tokenizers", "numpy", "openai", "tooltray.memory.agent.loop")
STORE = ("sqlalchemy", "alembic")
ORM = ("sqlalchemy.orm", "tooltray.memory.store.tables")
MAIN = importlib.import_module("tooltray.memory.cli.main")  # the package exports main()


def loaded_after(code: str, prints: str = "") -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` (which prints ``prints``)."""
    probe = f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert prints in out
    return set(json.loads(out.splitlines()[-1]))


def run_cli(*args: str) -> str:
    return (
        "import sys; from tooltray.memory.cli.main import cli\n"
        f"try:\n    cli({list(args)!r})\nexcept SystemExit:\n    pass"
    )


def test_help_loads_no_command_module_and_nothing_heavy() -> None:
    mods = loaded_after(run_cli("--help"))
    assert not {m for m in mods if m.startswith("tooltray.memory.cli.") and m != MAIN.__name__}
    assert not mods & {*HEAVY, *STORE}


@pytest.mark.parametrize("args", [("sql", "--help"), ("history", "--help"), ("db", "--help")])
def test_store_commands_load_neither_the_agent_nor_the_embedders(args: tuple[str, ...]) -> None:
    mods = loaded_after(run_cli(*args))
    assert not mods & {*HEAVY, *STORE}


@pytest.fixture
def store_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real SQLite store at head holding one session, as the fast commands find it.

    Its folder is not the test's ``tmp_path``, whose brackets (``test[sql-json]``) would send
    the URL to SQLAlchemy's reader.
    """
    from tooltray.memory.store import Changes, HistoryEvent, Store

    url = f"sqlite:///{tmp_path_factory.mktemp('startup') / 'startup.db'}"
    with Store(url) as store:
        events = [HistoryEvent("s1", 1, "selected", detail="selected")]
        store.apply("s1", Changes(turn=1, events=events, only_new=True))
    return url


@pytest.mark.parametrize("fmt", ["json", "csv"])
@pytest.mark.parametrize(
    ("args", "prints"),
    [
        (("sql", "SELECT id FROM sessions"), "s1"),
        (("db", "current"), "up to date"),
        (("history", "s1"), "selected"),
    ],
)
def test_fast_commands_on_sqlite_load_neither_sqlalchemy_nor_alembic(
    store_url: str, args: tuple[str, ...], prints: str, fmt: str
) -> None:
    mods = loaded_after(run_cli(*args, "--db", store_url, "--format", fmt), prints)
    assert not mods & {*HEAVY, *STORE}, sorted(mods & {*HEAVY, *STORE})


@pytest.mark.parametrize(
    "args",
    [("sql", "DELETE FROM sessions"), ("db", "current"), ("history", "s1"), ("history", "nope")],
)
def test_fast_commands_refusing_load_neither_sqlalchemy_nor_alembic(
    store_url: str, args: tuple[str, ...]
) -> None:
    path = store_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:  # an older schema: history refuses, db current says so
        conn.execute("UPDATE alembic_version SET version_num = 'none-such'")
    mods = loaded_after(run_cli(*args, "--db", store_url), "")
    assert not mods & {*HEAVY, *STORE}, sorted(mods & {*HEAVY, *STORE})


def test_the_store_package_exports_load_on_first_use() -> None:
    mods = loaded_after("import tooltray.memory.store as s; s.resolve_url, s.Changes")
    assert not mods & {*HEAVY, *STORE}
    import tooltray.memory.store as store

    for name in store.__all__:
        assert getattr(store, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = store.Nope  # type: ignore[attr-defined]


def test_importing_tooltray_memory_loads_nothing_until_used() -> None:
    mods = loaded_after("import tooltray.memory, tooltray.tools")
    assert not mods & {*HEAVY, *STORE, "pydantic"}


def test_the_public_exports_are_unchanged_and_resolve() -> None:
    expected = {
        "META_TOOL_NAMES", "Agent", "AllowedCatalog", "CachedEmbedder", "Embedder", "Hit",
        "MCPSource", "MiniLMOnnxEmbedder", "ModelError", "OpenAIEmbedder", "Planner", "PromptView",
        "ResultShelf", "Settings", "Skill", "SkillLibrary", "Store", "ToolIndex",
        "ToolLoaderTrinket", "TurnResult", "build_query", "default_embedder", "load_skills",
        "meta_tool_specs", "parse_tool_calls",
    }  # fmt: skip
    assert set(tooltray.memory.__all__) == expected
    for name in expected:
        assert getattr(tooltray.memory, name) is not None
    with pytest.raises(AttributeError):
        _ = tooltray.memory.NoSuchThing  # type: ignore[attr-defined]


def test_the_command_table_lists_every_command_of_every_module() -> None:
    modules = {module for module, _ in MAIN.COMMANDS.values()}
    for module in modules:
        loaded = importlib.import_module(f"tooltray.memory.cli.{module}")
        for command in loaded.COMMANDS:
            assert isinstance(command, click.Command)
            assert MAIN.COMMANDS[str(command.name)][0] == module, command.name


def test_the_cli_constants_match_the_library() -> None:
    from tooltray.memory.cli.sqlconsole.sql import DEFAULT_LIMIT
    from tooltray.tools.render import ENCODINGS, RENDER_PATHS

    assert db_cli.DEFAULT_LIMIT == DEFAULT_LIMIT
    assert catalog_cli.RENDER_PATHS == RENDER_PATHS
    assert catalog_cli.ENCODINGS == ENCODINGS
