"""Reliability suite fixtures: CI or full sizes, real embeddings seeded once, figures, processes.

Sizes: the default fits CI; ``pytest tests/reliability --full`` (or ``TOOLTRAY_FULL=1``) runs
the full counts (100+ kill trials, 4 processes x 500 turns, 10,000 examples per target).
``--figures PATH`` (or ``TOOLTRAY_FIGURES``) writes every test's figures as JSON.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.append(str(HERE))

import reliability_support as rs  # noqa: E402

FIGURES: dict[str, Any] = {}


@dataclass(frozen=True)
class Sizes:
    """How big each reliability experiment is."""

    full: bool
    kill_trials: int
    pg_kill_trials: int
    crash_turns: int
    processes: int
    turns: int
    examples: int


def sizes_for(full: bool) -> Sizes:
    """CI or full sizes; ``TOOLTRAY_REL_<FIELD>=N`` (e.g. ``TOOLTRAY_REL_TURNS``) overrides one."""
    base = Sizes(True, 100, 20, 20, 4, 500, 10_000) if full else Sizes(False, 2, 1, 6, 4, 8, 60)
    changes = {
        name: int(os.environ[f"TOOLTRAY_REL_{name.upper()}"])
        for name in Sizes.__dataclass_fields__
        if name != "full" and f"TOOLTRAY_REL_{name.upper()}" in os.environ
    }
    return replace(base, **changes)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tooltray reliability")
    group.addoption("--full", action="store_true", help="run the full reliability counts")
    group.addoption("--figures", default=None, help="write the reliability figures to this JSON")


def _option(config: pytest.Config, name: str, default: Any) -> Any:
    try:
        return config.getoption(name)
    except ValueError:  # the option is only known when this folder is on the command line
        return default


def pytest_configure(config: pytest.Config) -> None:
    full = bool(_option(config, "--full", False)) or os.environ.get("TOOLTRAY_FULL") == "1"
    rs.SIZES = sizes_for(full)


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = _option(session.config, "--figures", None) or os.environ.get("TOOLTRAY_FIGURES")
    if path and FIGURES:
        Path(path).write_text(json.dumps({"full": rs.SIZES.full, **FIGURES}, indent=2))


@pytest.fixture(scope="session")
def sizes() -> Sizes:
    return rs.SIZES  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def figures() -> dict[str, Any]:
    """Record figures here: ``figures["crash"] = {...}``; written at the end with --figures."""
    return FIGURES


@pytest.fixture(scope="session")
def vectors(tmp_path_factory: pytest.TempPathFactory) -> rs.Vectors:
    """The demo catalog's real MiniLM document vectors, embedded once per test run."""
    return rs.compute_vectors(tmp_path_factory.mktemp("vectors"))


@pytest.fixture(scope="session")
def template_db(vectors: rs.Vectors, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file at the newest schema with the catalog's embeddings cached."""
    path = tmp_path_factory.mktemp("template") / "template.db"
    vectors.seed(f"sqlite:///{path}")
    return path


@pytest.fixture
def seeded_sqlite(template_db: Path, tmp_path: Path) -> str:
    """A fresh SQLite store (copy of the template) for this test."""
    path = tmp_path / "tooltray.db"
    shutil.copy(template_db, path)
    return f"sqlite:///{path}"


def worker_env() -> dict[str, str]:
    """The environment for worker processes: no TOOLTRAY_* settings leak in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLTRAY_")}
    env["PYTHONUNBUFFERED"] = "1"
    env["OMP_NUM_THREADS"] = "1"
    return env


class Proc:
    """A worker subprocess whose stdout lines arrive on a queue as they are written."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        argv = [sys.executable, str(rs.WORKER), *args]
        self.started = time.monotonic()
        self.popen = subprocess.Popen(
            argv,
            cwd=cwd,
            env=worker_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next_line(self, timeout: float) -> str | None:
        """The next line, ``None`` at end of output; raises ``queue.Empty`` on timeout."""
        line = self.lines.get(timeout=timeout)
        if line is not None:
            self.seen.append(line)
        return line

    def drain(self, timeout: float = 120) -> list[str]:
        """Wait for the process to end and collect every line it wrote."""
        self.popen.wait(timeout=timeout)
        self._reader.join(timeout=timeout)
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self.seen.append(line)
        return self.seen

    def stderr(self) -> str:
        assert self.popen.stderr is not None
        return self.popen.stderr.read()

    def stats(self) -> dict[str, Any]:
        """The worker's closing ``stats`` line (fails the test if it did not finish)."""
        for line in reversed(self.seen):
            if line.startswith("stats "):
                return dict(json.loads(line[6:]))
        raise AssertionError(f"worker did not finish: rc={self.popen.returncode}\n{self.stderr()}")


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Any]:
    """Start worker processes (killed at the end of the test if still running)."""
    procs: list[Proc] = []

    def start(*args: str) -> Proc:
        proc = Proc(list(args), tmp_path)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.popen.poll() is None:
            proc.popen.kill()
            proc.popen.wait()
