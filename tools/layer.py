"""One layer of the tool registry: an ordered, locked set of tools and bundle descriptions.

A :class:`ToolLayer` is the unit that can be shared. The catalog layer is typically loaded once
at start-up and handed to many :class:`~tooltray.tools.registry.ToolRegistry` objects (one per
agent instance); each registry adds its own instance layer on top.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from tooltray.tools.errors import DuplicateToolError, ToolSpecError, UnknownToolError
from tooltray.tools.names import clash_key, did_you_mean
from tooltray.tools.spec import Bundle, ToolSpec

Executor = Callable[..., Any]


@dataclass(frozen=True)
class Entry:
    """A registered tool: its spec, optional executor, owning layer and cached content hash."""

    spec: ToolSpec
    fn: Executor | None
    layer: str
    content_hash: str

    def describe(self) -> str:
        """Where the tool came from, for error messages."""
        return f"{self.layer} layer (source {self.spec.source!r})"


def clash_message(new: ToolSpec, layer: str, old: Entry) -> str:
    """Explain why ``new`` cannot join ``layer`` next to ``old`` and what to do."""
    same = new.name == old.spec.name
    what = "is already registered" if same else f"collides with {old.spec.name!r} once"
    tail = "" if same else " its mcp__ prefix is stripped"
    return (
        f"Tool {new.name!r} from {layer} layer (source {new.source!r}) {what}{tail} in "
        f"{old.describe()}. Rename one of them or unregister the old one first; tooltray never "
        "lets one tool silently shadow another."
    )


class ToolLayer:
    """An ordered collection of tools (with executors) and bundle descriptions.

    Args:
        name: the layer's label in error messages (``catalog`` or ``instance``).
        tools: specs to add in order.
        bundles: bundle descriptions; members are recomputed from ``ToolSpec.bundle``.
    """

    def __init__(
        self, name: str = "catalog", tools: Iterable[ToolSpec] = (), bundles: Iterable[Bundle] = ()
    ) -> None:
        self.name = name
        self.version = 0
        self._lock = threading.RLock()
        self._entries: dict[str, Entry] = {}
        self._keys: dict[str, str] = {}
        self._bundles: dict[str, Bundle] = {}
        for spec in tools:
            self.add(spec)
        for bundle in bundles:
            self.add_bundle(bundle)

    def find(self, name: str) -> Entry | None:
        """The entry with exactly this name, else the one it names with an ``mcp__`` prefix."""
        with self._lock:
            entry = self._entries.get(name)
            owner = None if entry else self._keys.get(clash_key(name))
            return entry or (self._entries[owner] if owner else None)

    def check(self, spec: ToolSpec, layer: str) -> None:
        """Raise :class:`DuplicateToolError` if ``spec`` would clash with a tool here."""
        if not isinstance(spec, ToolSpec):
            raise ToolSpecError(
                f"Expected a ToolSpec, got {type(spec).__name__}; build one with from_openai, "
                "from_mcp, from_callable or ToolSpec(...)."
            )
        with self._lock:
            owner = self._keys.get(clash_key(spec.name))
            old = self._entries[owner] if owner is not None else None
        if old is not None:
            raise DuplicateToolError(clash_message(spec, layer, old))

    def add(self, spec: ToolSpec, fn: Executor | None = None) -> None:
        """Append ``spec`` (and its executor); clashing names raise ``DuplicateToolError``."""
        with self._lock:
            self.check(spec, self.name)
            self._entries[spec.name] = Entry(spec, fn, self.name, spec.content_hash)
            self._keys[clash_key(spec.name)] = spec.name
            self.version += 1

    def remove(self, name: str) -> ToolSpec:
        """Remove the tool called exactly ``name`` and return its spec."""
        with self._lock:
            entry = self._entries.pop(name, None)
            if entry is None:
                raise UnknownToolError(name, did_you_mean(name, self._entries))
            del self._keys[clash_key(name)]
            self.version += 1
            return entry.spec

    def add_bundle(self, bundle: Bundle) -> None:
        """Describe a bundle (a later call for the same name replaces the description)."""
        with self._lock:
            self._bundles[bundle.name] = bundle
            self.version += 1

    def entries(self) -> list[Entry]:
        """A snapshot of the entries in registration order."""
        with self._lock:
            return list(self._entries.values())

    def bundle_info(self) -> dict[str, Bundle]:
        """A snapshot of the bundle descriptions."""
        with self._lock:
            return dict(self._bundles)

    def __len__(self) -> int:
        return len(self._entries)
