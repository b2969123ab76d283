"""The demo catalog (128 tools in 15 bundles), its simulated executors, script, skills and the
scripted model that plays the script seeing only its prompt."""

from tooltray.tools.demo.catalog import (
    demo_catalog_path,
    demo_core,
    demo_script,
    demo_skills_dir,
    load_demo_catalog,
)
from tooltray.tools.demo.executors import execute_demo_tool
from tooltray.tools.demo.model import ModelCall, ScriptedTurn, UnfairCallError, check_fair
from tooltray.tools.demo.registry import demo_registry

__all__ = [
    "ModelCall",
    "ScriptedTurn",
    "UnfairCallError",
    "check_fair",
    "demo_catalog_path",
    "demo_core",
    "demo_registry",
    "demo_script",
    "demo_skills_dir",
    "execute_demo_tool",
    "load_demo_catalog",
]
