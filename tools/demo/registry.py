"""The demo registry: the demo catalog with executors that simulate every tool."""

from __future__ import annotations

from typing import Any

from tooltray.tools.demo.catalog import load_demo_catalog
from tooltray.tools.demo.executors import execute_demo_tool
from tooltray.tools.layer import ToolLayer
from tooltray.tools.registry import ToolRegistry


class _Simulated:
    """Executor for one demo tool: keyword arguments in, simulated JSON result out."""

    def __init__(self, tool: str) -> None:
        self.tool = tool

    def __call__(self, **arguments: Any) -> str:
        return execute_demo_tool(self.tool, arguments)


def demo_registry() -> ToolRegistry:
    """A registry of the demo catalog whose tools run their simulated implementations."""
    tools, bundles = load_demo_catalog()
    layer = ToolLayer("catalog")
    for spec in tools:
        layer.add(spec, _Simulated(spec.name))
    return ToolRegistry(layer, bundles=bundles)
