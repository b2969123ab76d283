"""The adapters package imports without its frameworks: each loads only when its name is used."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHECK = (
    "import sys, tooltray.memory, tooltray.memory.adapters as a; "
    "assert not {'agents', 'pydantic_ai', 'langchain', 'google.adk'} & set(sys.modules), 'eager'; "
    "print(sorted(a.__all__))"
)


def test_adapters_import_without_their_frameworks() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "'AgentsTray'" in done.stdout and "'TrayToolset'" in done.stdout
    assert "'TrayMiddleware'" in done.stdout and "'AdkTray'" in done.stdout


def test_unknown_adapter_names_raise_attribute_error() -> None:
    import tooltray.memory.adapters as adapters

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = adapters.Nope
