"""A later turn's path through the public API (``bench/trace_turn.py``) against the README.

The README's "One turn" list names the modules a turn passes through; every library module it
names (the agent loop aside, which the public API does not run) must be on the traced path, and
the path must not grow: issue 24's target is at most 20 modules, it is at ``CEILING`` today.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CEILING = 20  # issue 24's target (54 before the packages were merged along concept lines)


def _script() -> object:
    spec = importlib.util.spec_from_file_location("trace_turn", ROOT / "bench" / "trace_turn.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _readme_modules() -> set[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    part = text.split("One turn passes through these modules:")[1].split("Where things go:")[0]
    out, folder = set(), ""
    for path in re.findall(r"`((?:memory/|tools/|events/|core/|retrieval/)?[\w/]+\.py)`", part):
        if path.startswith(("memory/", "tools/", "events/")):
            folder = path.rsplit("/", 1)[0]
        elif "/" in path:
            path = f"memory/{path}"
        else:
            path = f"{folder}/{path}"
        out.add("tooltray." + path[:-3].replace("/", "."))
    return {m for m in out if ".agent." not in m}


def test_a_later_turn_enters_the_modules_the_readme_names(tmp_path: Path) -> None:
    trace = _script().later_turn(f"sqlite:///{tmp_path / 'trace.db'}")  # type: ignore[attr-defined]
    named = _readme_modules()
    assert len(named) >= 15, f"the README's list was not read: {sorted(named)}"
    assert named <= set(trace), f"named but not entered: {sorted(named - set(trace))}"
    assert len(trace) <= CEILING, f"a turn now enters {len(trace)} modules: {trace}"
