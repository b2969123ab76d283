"""The bundled demo catalog: 128 realistic tools in 15 bundles, for ``tooltray demo`` and docs.

The tools cover what a personal/work assistant touches (files, git, web, calendar, email, chat,
database, math, weather, travel, shopping, documents, memory, maps, contacts) so that retrieval,
bundles and the meta-tools have a catalog large enough to matter. ``executors`` simulates them.

The CORE (always loaded, ``pinned=True``) is kept to four cheap tools every session needs:

- ``memory_recall`` and ``memory_save``: continuity across conversations; the model should check
  what it already knows about the user before asking, whatever the topic.
- ``web_search``: the general escape hatch for facts the model lacks, in any domain.
- ``math_evaluate``: models are unreliable at arithmetic, and prices, totals, durations and
  conversions turn up in nearly every domain.

Everything else is found by retrieval or ``load_tools``. The CORE list lives in
``data/demo_bundles.json`` beside the one-line bundle descriptions.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

from tooltray.tools.errors import ConfigError, ToolSpecError
from tooltray.tools.importers.catalog import read_catalog
from tooltray.tools.spec import Bundle, ToolSpec

CATALOG_FILE = "demo_catalog.jsonl"
BUNDLES_FILE = "demo_bundles.json"
SOURCE = "demo"
DATA_PACKAGE = "tooltray.tools.demo"


def demo_catalog_path() -> Path:
    """The installed ``demo_catalog.jsonl`` (a real file: tooltray is never zip-imported)."""
    return _data_file(CATALOG_FILE)


def demo_skills_dir() -> Path:
    """The folder of demo ``SKILL.md`` files, usable as ``skills_dir``."""
    return _data_file("skills")


def demo_script() -> list[dict[str, Any]]:
    """The scripted demo conversation: turns of ``user``, gold ``calls`` and ``assistant``."""
    data = json.loads(_data_file("demo_script.json").read_text("utf-8"))
    turns: list[dict[str, Any]] = data["turns"]
    return turns


def _data_file(name: str) -> Path:
    path = Path(str(files(DATA_PACKAGE) / "data" / name))
    if not path.exists():
        raise ConfigError(
            f"Demo data {name!r} is missing from {DATA_PACKAGE}; reinstall tooltray "
            "(the wheel's package-data must include it)."
        )
    return path


def _bundle_info() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_data_file(BUNDLES_FILE).read_text("utf-8"))
    return data


def demo_core() -> list[str]:
    """Names of the CORE tools: always loaded and never unloaded in the demo."""
    return [str(name) for name in _bundle_info()["core"]]


def load_demo_catalog() -> tuple[list[ToolSpec], list[Bundle]]:
    """The demo tools (source ``demo``, CORE ones pinned) and their described bundles.

    Raises:
        ToolSpecError: the packaged files disagree (a CORE name or bundle that does not exist).
    """
    info = _bundle_info()
    catalog = read_catalog(demo_catalog_path(), source=SOURCE)
    core = set(info["core"])
    missing = core - {t.name for t in catalog.tools}
    if missing:
        raise ToolSpecError(f"{BUNDLES_FILE}: CORE names {sorted(missing)} are not in the catalog.")
    tools = [t.model_copy(update={"pinned": True}) if t.name in core else t for t in catalog.tools]
    described: dict[str, str] = info["bundles"]
    bundles = [
        Bundle(name=b.name, description=described.get(b.name, ""), members=b.members)
        for b in catalog.bundles
    ]
    return tools, bundles
