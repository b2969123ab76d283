"""Issue 27's CLI cases: each once gave a traceback, a wrong diagnosis or a new store by mistake.

Every case runs the real CLI in-process on real files and asserts one line on stderr, a
non-zero exit and what the line must say. Read-only files are made read-only for real: with
``chmod`` as a user, with ``chattr +i`` as root (root ignores permissions, not the immutable flag).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tooltray.memory.cli.main import cli

STORE_COMMANDS = [
    ["demo"],
    ["db", "current"],
    ["db", "upgrade"],
    ["db", "prune", "--before", "2020-01-01"],
    ["history", "s1"],
    ["sql", "SELECT 1"],
    ["eval", "recall"],
    ["report", "s1"],
]


def run(args: list[str], env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, args, env={"TOOLTRAY_CONFIG": None, **(env or {})})


def one_line(result: Result) -> str:
    """The single stderr line of a failed run (asserting there is exactly one, no traceback)."""
    shown = f"exit {result.exit_code}:\n{result.output}"
    assert result.exit_code != 0, shown
    assert "Traceback" not in result.output, shown
    assert result.exception is None or isinstance(result.exception, SystemExit), shown
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, shown
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A real, healthy store at head."""
    path = tmp_path / "store" / "tooltray.db"
    path.parent.mkdir()
    assert run(["db", "upgrade", "--db", str(path)]).exit_code == 0
    return path


@pytest.mark.parametrize("args", STORE_COMMANDS, ids=[" ".join(a) for a in STORE_COMMANDS])
def test_a_database_name_over_255_bytes_is_one_line(args: list[str], tmp_path: Path) -> None:
    long = tmp_path / ("x" * 300 + ".db")
    line = one_line(run([*args, "--db", str(long)]))
    assert "303 bytes" in line and "255" in line and "--db" in line


def test_report_names_the_picture_formats_it_can_write(store: Path, tmp_path: Path) -> None:
    before = digest(store)
    out = str(tmp_path / "d2.txt")
    line = one_line(run(["report", "demo-2", "--out", out, "--db", str(store)]))
    assert "'.txt'" in line and ".png" in line and ".svg" in line
    assert digest(store) == before


def test_report_on_a_database_that_does_not_exist_creates_nothing(tmp_path: Path) -> None:
    typo = tmp_path / "typo.db"
    line = one_line(run(["report", "s1", "--db", str(typo)]))
    assert "no tooltray database" in line and "typo.db" in line
    assert not typo.exists()


def test_a_chat_script_that_is_not_json_names_file_line_and_column(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text('["hello",\n  oops]', encoding="utf-8")
    args = ["chat", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--script", str(script)]
    line = one_line(run([*args, "--db", str(tmp_path / "t.db")]))
    assert "bad.json" in line and "line 2, column 3" in line
    assert not (tmp_path / "t.db").exists()


def test_a_bad_setting_in_the_environment_names_setting_source_and_type(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    line = one_line(run(["demo", "--db", str(db)], env={"TOOLTRAY_MAX_TOOLS": "abc"}))
    assert "'max_tools'" in line and "TOOLTRAY_MAX_TOOLS='abc'" in line and "an integer" in line
    assert not db.exists()


@pytest.mark.parametrize("command", [["demo"], ["mcp", "serve", "--config", "servers.json"]])
def test_a_bad_setting_in_the_toml_file_is_one_line(command: list[str], tmp_path: Path) -> None:
    config = tmp_path / "tooltray.toml"
    config.write_text('[tooltray]\nactivation_share = "lots"\n', encoding="utf-8")
    servers = tmp_path / "servers.json"
    servers.write_text('{"mcpServers": {"t": {"command": "true"}}}', encoding="utf-8")
    args = [str(servers) if a == "servers.json" else a for a in command]
    db = tmp_path / "t.db"
    line = one_line(run([*args, "--db", str(db)], env={"TOOLTRAY_CONFIG": str(config)}))
    assert "'activation_share'" in line and str(config) in line and "a number" in line
    assert not db.exists()


def test_a_usage_error_is_one_line_with_where_to_look() -> None:
    line = one_line(run(["sql", "SELECT 1", "--frob"]))
    assert "--frob" in line and "tooltray sql --help" in line.replace("cli sql", "tooltray sql")


def test_the_cli_opens_the_store_the_toml_file_names(store: Path, tmp_path: Path) -> None:
    """--db, else TOOLTRAY_DB, else ``db`` in tooltray.toml, else ./tooltray.db: as Settings()."""
    from tooltray.memory.config import Settings

    config = tmp_path / "tooltray.toml"
    config.write_text(f'[tooltray]\ndb = "{store}"\n', encoding="utf-8")
    env = {"TOOLTRAY_CONFIG": str(config), "TOOLTRAY_DB": None}
    shown = run(["db", "current", "--format", "csv"], env=env)
    assert shown.exit_code == 0, shown.output
    assert str(store) in shown.stdout and "up to date" in shown.stdout
    other = tmp_path / "other.db"
    assert run(["db", "upgrade"], env={**env, "TOOLTRAY_DB": str(other)}).exit_code == 0
    assert other.exists()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TOOLTRAY_CONFIG", str(config))
        mp.delenv("TOOLTRAY_DB", raising=False)
        assert Settings().db == str(store)


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` (a file or a folder) made read-only for this process, whoever runs it."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    chattr = shutil.which("chattr")
    done = chattr and subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode
    if done != 0:
        pytest.skip("running as root, where only an immutable flag stops writes: chattr +i failed")
    try:
        yield
    finally:
        subprocess.run([str(chattr), "-i", str(path)], check=True)


WRITERS = [["demo"], ["db", "upgrade"], ["db", "prune", "--before", "2020-01-01"]]


@pytest.mark.parametrize("args", WRITERS, ids=[" ".join(a) for a in WRITERS])
def test_a_read_only_store_is_called_read_only_not_damaged(args: list[str], store: Path) -> None:
    before = digest(store)
    with read_only(store):
        line = one_line(run([*args, "--db", str(store)]))
    assert "read-only" in line and "damaged" in line and "not damaged" in line
    assert "move it aside" not in line and digest(store) == before


def test_a_read_only_store_can_still_be_read(store: Path) -> None:
    with read_only(store):
        result = run(["sql", "SELECT COUNT(*) AS n FROM sessions", "--db", str(store)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("args", [["demo"], ["db", "upgrade"]], ids=["demo", "db upgrade"])
def test_a_new_database_in_a_read_only_folder_says_so(args: list[str], tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    with read_only(folder):
        line = one_line(run([*args, "--db", str(folder / "new.db")]))
    assert f"the folder {folder} is read-only" in line and "damaged" not in line
    assert not (folder / "new.db").exists()


@pytest.mark.parametrize("args", [["demo"], ["db", "upgrade"]], ids=["demo", "db upgrade"])
def test_a_new_database_in_a_missing_folder_says_so(args: list[str], tmp_path: Path) -> None:
    line = one_line(run([*args, "--db", str(tmp_path / "nowhere" / "new.db")]))
    assert "does not exist" in line and "mkdir -p" in line and "damaged" not in line


@contextmanager
def read_only_mount(folder: Path) -> Iterator[None]:
    """``folder`` remounted read-only: a tmpfs over it, filled, then ``remount,ro`` (root only)."""
    saved = {p.name: p.read_bytes() for p in folder.iterdir()}
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(folder)])
    if os.geteuid() != 0 or mounted.returncode != 0:
        pytest.skip("a read-only mount needs root and a mount namespace that allows tmpfs")
    try:
        for name, data in saved.items():
            (folder / name).write_bytes(data)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_store_on_a_read_only_mount_is_called_read_only(store: Path) -> None:
    with read_only_mount(store.parent):
        before = digest(store)
        line = one_line(run(["demo", "--db", str(store)]))
        shown = run(["sql", "SELECT COUNT(*) FROM sessions", "--db", str(store)])
        report = one_line(run(["eval", "recall", "--db", str(store)]))
        assert digest(store) == before
    assert "read-only" in line and "not damaged" in line and "mount" in line
    assert shown.exit_code == 0, shown.output
    assert "read-only" in report and "not damaged" in report and "tooltray sql" in report
