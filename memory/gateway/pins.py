"""Tool pinning: an upstream tool whose description or schema changed is held back.

A server can change what a tool says after the user first trusted it ("tool poisoning"): new
text would reach the model unannounced. Each tool's fingerprint (its description and input
schema) is kept per ``server/tool`` from the first time it is seen; a tool listed with another
fingerprint is left out of the catalog (not listed, not run) with one WARNING, until accepted
with ``tooltray mcp accept`` or ``accept_changed_tools = true``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable

from mcp import types

from tooltray.memory.gateway.state import GatewayState

log = logging.getLogger("tooltray.gateway")


def fingerprint(tool: types.Tool) -> str:
    """sha256 of the tool's description and input schema (canonical JSON)."""
    doc = {"d": tool.description or "", "s": tool.input_schema}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ToolPins:
    """Admits the tools whose fingerprint is the accepted one.

    Args:
        state: where accepted and pending fingerprints persist.
        accept_changed: accept every changed tool (and record its new fingerprint).
    """

    def __init__(self, state: GatewayState, accept_changed: bool = False) -> None:
        self.state = state
        self.accept_changed = accept_changed
        self.held: dict[str, str] = {}  # server/tool -> the fingerprint held back now

    def admit(self, server: str, tools: list[types.Tool]) -> list[types.Tool]:
        """``tools`` without those held back; first-seen ones are recorded as accepted."""
        kept = [t for t in tools if self._admitted(f"{server}/{t.name}", fingerprint(t))]
        self.state.save()
        return kept

    def _admitted(self, key: str, now: str) -> bool:
        first = self.state.tools.get(key)
        if first is None or first == now or self.accept_changed:
            if first is not None and first != now:
                log.warning("tooltray gateway: %s changed; accepted (accept_changed_tools).", key)
            if first != now:
                self.state.put("tools", key, now)
            self.held.pop(key, None)
            return True
        if self.held.get(key) != now:
            log.warning(
                "tooltray gateway: %s changed its description or schema since first seen; held "
                "back (not listed, not run) until accepted: tooltray mcp accept %s",
                key,
                key,
            )
            self.state.put("pending", key, now)
        self.held[key] = now
        return False

    def refusal(self, name: str, exposed: Callable[[str, str], str]) -> str | None:
        """The message for a call of ``name`` when it is a held-back tool, else ``None``
        (``exposed`` gives the prefixed name the gateway would show for server and tool)."""
        for key in self.held:
            server, tool = key.split("/", 1)
            if name in (tool, exposed(server, tool), key):
                return (
                    f"Tool {name!r} of MCP server {server!r} is held back: its description or "
                    "schema changed since it was first seen. If the change is trusted, run "
                    f"`tooltray mcp accept {key}` and restart the gateway."
                )
        return None
