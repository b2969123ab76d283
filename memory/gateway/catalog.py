"""The gateway's catalog: upstream tools under the names the client sees, and who owns each.

Each upstream server is a bundle. A tool keeps its own name unless it clashes with another
server's tool, a meta-tool or the ``call_tool`` bridge (``prefix="clash"``, the default); then
it is named by the config's ``prefixFormat`` (``{server}_{tool}``). The registry gets a
:class:`ToolSpec` per tool (for retrieval, tokens and the allow-list) while ``tools/list``
answers with the upstream's own ``Tool`` object, so schemas, annotations and output schemas
reach the client as they are.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

from mcp import types

from tooltray.memory.gateway.config import GatewayConfig
from tooltray.memory.gateway.pins import ToolPins
from tooltray.memory.gateway.policy import GatewayPolicy
from tooltray.memory.gateway.state import GatewayState
from tooltray.memory.metatools.meta_tools import CALL_TOOL, META_TOOL_NAMES
from tooltray.tools.errors import TooltrayError
from tooltray.tools.importers.mcp import from_mcp
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import ToolSpec

log = logging.getLogger("tooltray.gateway")


@dataclass(frozen=True)
class Route:
    """Where a listed tool goes: its server, its name there, and its upstream definition."""

    server: str
    tool: str
    definition: types.Tool


class GatewayCatalog:
    """Keeps the registry in step with what each upstream lists.

    Args:
        config: the servers (in order, which decides listing order) and the prefix rule.
        registry: the registry the trinket reads; only its instance layer is touched.
    """

    def __init__(
        self,
        config: GatewayConfig,
        registry: ToolRegistry,
        policy: GatewayPolicy | None = None,
        pins: ToolPins | None = None,
    ) -> None:
        self.config = config
        self.registry = registry
        self.policy = policy or GatewayPolicy(None, ())
        self.pins = pins or ToolPins(GatewayState(None))
        self.listed: dict[str, list[types.Tool]] = {}
        self.routes: dict[str, Route] = {}
        self._pinned = {s.name for s in config.servers if s.always_load}

    def update(self, server: str, tools: list[types.Tool]) -> bool:
        """Record ``server``'s tool list and re-register; True when the catalog changed.

        A tool whose description or schema changed since first seen is left out (pins.py).
        """
        tools = self.pins.admit(server, tools)
        if self.listed.get(server) == tools:
            return False
        self.listed[server] = list(tools)
        routes = self._routes()
        if routes == self.routes:
            return False
        self._register(routes)
        return True

    def listed_routes(self) -> dict[str, Route]:
        """Every route the servers listed, allowed or not, under its shown name."""
        return self._routes()

    def route(self, name: str) -> Route | None:
        """The route of the allowed tool ``name`` (resolving prefixed spellings), else ``None``."""
        if name in self.routes:
            return self.routes[name]
        try:
            return self.routes.get(self.registry.resolve(name).name)
        except TooltrayError:
            return None

    def definition(self, name: str) -> types.Tool | None:
        """The upstream ``Tool`` under its listed name."""
        route = self.routes.get(name)
        if route is None:
            return None
        return route.definition.model_copy(update={"name": name})

    def _routes(self) -> dict[str, Route]:
        counts = Counter(t.name for tools in self.listed.values() for t in tools)
        routes: dict[str, Route] = {}
        for server in (s.name for s in self.config.servers if s.name in self.listed):
            for tool in self.listed[server]:
                name = self._name(server, tool.name, counts)
                if name in routes:
                    log.error(
                        "tooltray gateway: %r from %r is listed twice; kept the first.",
                        name,
                        server,
                    )
                    continue
                routes[name] = Route(server, tool.name, tool)
        return routes

    def _name(self, server: str, tool: str, counts: Counter[str]) -> str:
        mode = self.config.prefix
        clash = counts[tool] > 1 or tool in (*META_TOOL_NAMES, CALL_TOOL)
        if mode == "always" or (mode == "clash" and clash):
            return self.config.exposed_name(server, tool)
        return tool

    def _register(self, routes: dict[str, Route]) -> None:
        """Swap the registry's instance layer over to ``routes`` (tools that fail are logged)."""
        for name in list(self.routes):
            if self.registry.get(name) is not None:
                self.registry.unregister(name)
        allow, deny = self.policy.registry_lists(routes)
        self.registry.allow, self.registry.deny = allow, deny  # before any tool is in
        kept: dict[str, Route] = {}
        for name, route in routes.items():
            spec = self._spec(name, route)
            if spec is None:
                continue
            try:
                self.registry.register(spec)
            except TooltrayError as exc:
                log.error("tooltray gateway: skipped tool %r from %r: %s", name, route.server, exc)
                continue
            kept[name] = route
        self.routes = kept

    def _spec(self, name: str, route: Route) -> ToolSpec | None:
        data = route.definition.model_dump(by_alias=True, exclude_none=True)
        data["name"] = name
        try:
            spec = from_mcp(data, server=route.server)
        except TooltrayError as exc:
            log.error("tooltray gateway: skipped tool %r from %r: %s", name, route.server, exc)
            return None
        return spec.model_copy(update={"pinned": True}) if route.server in self._pinned else spec
