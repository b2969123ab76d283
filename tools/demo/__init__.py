"""The demo catalog (128 tools in 15 bundles), its simulated executors, its script and skills."""

from tooltray.tools.demo.catalog import (
    demo_catalog_path,
    demo_core,
    demo_script,
    demo_skills_dir,
    load_demo_catalog,
)
from tooltray.tools.demo.executors import execute_demo_tool
from tooltray.tools.demo.registry import demo_registry

__all__ = [
    "demo_catalog_path",
    "demo_core",
    "demo_registry",
    "demo_script",
    "demo_skills_dir",
    "execute_demo_tool",
    "load_demo_catalog",
]
