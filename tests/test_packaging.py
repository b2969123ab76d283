"""The install layout: every source package is declared, and only `tooltray.*` is importable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
TOP_LEVEL = ("tools", "events", "memory", "migrations")


def _setuptools() -> dict[str, object]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    config: dict[str, object] = data["tool"]["setuptools"]
    return config


def _folder_of(package: str, package_dir: dict[str, str]) -> Path:
    """Where setuptools looks for ``package``: the longest mapped prefix, then sub-folders."""
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in package_dir:
            return ROOT / package_dir[prefix] / Path(*parts[cut:])
    return ROOT / Path(*parts)


def _source_packages() -> list[str]:
    found = []
    for top in TOP_LEVEL:
        for init in sorted((ROOT / top).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT)
            if "__pycache__" not in rel.parts:
                found.append("tooltray." + ".".join(rel.parts))
    return found


def test_every_source_package_is_declared_and_mapped() -> None:
    config = _setuptools()
    packages = set(config["packages"])  # type: ignore[call-overload]
    package_dir: dict[str, str] = config["package-dir"]  # type: ignore[assignment]
    found = _source_packages()
    assert "tooltray.tools" in found and "tooltray.migrations.versions" in found
    missing = [p for p in found if p not in packages]
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {missing}"
    for package in packages:
        folder = _folder_of(package, package_dir)
        assert (folder / "__init__.py").is_file(), (
            f"{package} maps to {folder}, which has no __init__.py"
        )
    for top in TOP_LEVEL:
        assert package_dir[f"tooltray.{top}"] == top


@pytest.mark.parametrize("top", TOP_LEVEL)
def test_only_the_tooltray_namespace_is_importable(top: str, tmp_path: Path) -> None:
    bare = subprocess.run(
        [sys.executable, "-c", f"import {top}"], cwd=tmp_path, capture_output=True, text=True
    )
    assert bare.returncode != 0
    assert f"ModuleNotFoundError: No module named '{top}'" in bare.stderr
    ok = subprocess.run(
        [sys.executable, "-c", f"import tooltray.{top}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr


def test_every_package_imports_first_in_a_fresh_interpreter(tmp_path: Path) -> None:
    """An import cycle shows only when the right package is imported first: try each first."""
    modules = _source_packages() + ["tooltray.memory.metatools.meta_tools"]
    script = (
        "import importlib, subprocess, sys\n"
        "bad = []\n"
        "for m in sys.argv[1:]:\n"
        "    r = subprocess.run([sys.executable, '-c', f'import {m}'], capture_output=True,"
        " text=True)\n"
        "    if r.returncode:\n"
        "        bad.append(m + ': ' + (r.stderr.strip().splitlines() or [''])[-1])\n"
        "print('\\n'.join(bad))\n"
    )
    wanted = [m for m in modules if "versions" not in m]
    run = subprocess.run(
        [sys.executable, "-c", script, *wanted], cwd=tmp_path, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "", f"these modules fail when imported first:\n{run.stdout}"


CLIENTS = ("agent", "adapters", "cli", "eval", "gateway", "lint", "report")
CORE = ("core", "metatools", "retrieval", "embedders", "store", "learning")


def _imports(folder: Path) -> set[tuple[str, str]]:
    """(file, imported module) for every import in the Python files below ``folder``."""
    import ast

    found = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add((path.name, node.module))
            elif isinstance(node, ast.Import):
                found |= {(path.name, alias.name) for alias in node.names}
    return found


@pytest.mark.parametrize("package", CORE)
def test_the_core_never_imports_a_client(package: str) -> None:
    clients = tuple(f"tooltray.memory.{c}" for c in CLIENTS)
    wrong = {(f, m) for f, m in _imports(ROOT / "memory" / package) if m.startswith(clients)}
    assert not wrong, f"move what the core needs out of the client package: {sorted(wrong)}"


def test_tools_never_imports_memory() -> None:
    wrong = {(f, m) for f, m in _imports(ROOT / "tools") if m.startswith("tooltray.memory")}
    assert not wrong, sorted(wrong)
