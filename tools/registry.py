"""The registry: every tool an agent has, in two layers, behind one allow-list.

The catalog layer (often shared by many agents, loaded at start-up) and the instance layer
(tools registered while the agent runs) are merged at query time. No tool silently shadows
another: a name clash, within or across layers or once an ``mcp__`` wrapper goes, raises; two
servers' ``alpha__search`` and ``beta__search`` are two tools.
Everything downstream (rendering, loading, execution) sees only what the allow-list permits.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from tooltray.events.payloads import ToolsRegistered
from tooltray.events.signals import tools_registered
from tooltray.tools.errors import (
    SHOWN_CHARS,
    ConfigError,
    DuplicateToolError,
    ToolNotAllowedError,
    TooltrayError,
    UnknownToolError,
    shown,
)
from tooltray.tools.layer import Entry, Executor, ToolLayer, clash_message
from tooltray.tools.names import clash_key, did_you_mean, match_key
from tooltray.tools.policy import Policy
from tooltray.tools.spec import Bundle, ToolSpec


@dataclass(frozen=True)
class _View:
    entries: dict[str, Entry]
    keys: dict[str, str]
    loose: dict[str, str | None]
    allowed: tuple[ToolSpec, ...]
    allowed_names: frozenset[str]
    bundles: tuple[Bundle, ...]
    fingerprint: str


def _bundles(allowed: Iterable[ToolSpec], info: dict[str, Bundle]) -> tuple[Bundle, ...]:
    members: dict[str, list[str]] = {}
    for spec in allowed:
        if spec.bundle is not None:
            members.setdefault(spec.bundle, []).append(spec.name)
    return tuple(
        Bundle(name=b, description=info[b].description if b in info else "", members=tuple(m))
        for b, m in members.items()
    )


def _fingerprint(entries: dict[str, Entry], allowed: Iterable[ToolSpec], bundles: Any) -> str:
    digest = hashlib.sha256()
    for spec in allowed:
        digest.update(f"{spec.name}\t{entries[spec.name].content_hash}\t{spec.bundle}\n".encode())
    for bundle in bundles:
        digest.update(f"#{bundle.name}\t{bundle.description}\n".encode())
    return digest.hexdigest()


class ToolRegistry:
    """All tools of one agent: a (shareable) catalog layer, an instance layer, an allow-list.

    Args:
        catalog: the catalog layer's tools, or a :class:`ToolLayer` shared with other registries.
        bundles: bundle descriptions for the catalog layer (members come from ``ToolSpec.bundle``).
        allow: tool names, patterns or ``bundle:NAME`` entries permitted; ``None`` = all.
        deny: entries refused even if allowed.

    Example:
        >>> shared = ToolLayer("catalog", specs, bundles)          # doctest: +SKIP
        >>> agent_a = ToolRegistry(shared, allow={"bundle:files"})  # doctest: +SKIP
    """

    def __init__(
        self,
        catalog: Iterable[ToolSpec] | ToolLayer = (),
        *,
        bundles: Iterable[Bundle] = (),
        allow: Iterable[str] | None = None,
        deny: Iterable[str] | None = None,
    ) -> None:
        self._lock = threading.RLock()
        if isinstance(catalog, ToolLayer):
            self.catalog = catalog
            for bundle in bundles:
                catalog.add_bundle(bundle)
        else:
            self.catalog = ToolLayer("catalog", catalog, bundles)
        self.instance = ToolLayer("instance")
        self._policy = Policy(allow, deny)
        self._policy_version = 0
        self._cache: tuple[tuple[int, int, int], _View] | None = None

    @classmethod
    def from_catalog(cls, path: str | os.PathLike[str], **kwargs: Any) -> ToolRegistry:
        """Build a registry whose catalog layer is a tools.jsonl file (see ``load_catalog``)."""
        from tooltray.tools.importers.catalog import load_catalog

        sanitize = bool(kwargs.pop("sanitize", False))
        tools, bundles = load_catalog(path, sanitize=sanitize)
        return cls(tools, bundles=bundles, **kwargs)

    # -- policy -------------------------------------------------------------------------------

    @property
    def allow(self) -> frozenset[str] | None:
        """The allow-list entries (``None``: every tool not denied)."""
        allow = self._policy.allow
        entries: frozenset[str] | None = None if allow is None else allow.entries
        return entries

    @allow.setter
    def allow(self, entries: Iterable[str] | None) -> None:
        with self._lock:
            self._policy = Policy(entries, self._policy.deny.entries)
            self._policy_version += 1

    @property
    def deny(self) -> frozenset[str]:
        """The deny-list entries; deny wins over allow."""
        entries: frozenset[str] = self._policy.deny.entries
        return entries

    @deny.setter
    def deny(self, entries: Iterable[str] | None) -> None:
        with self._lock:
            self._policy = Policy(self.allow, entries)
            self._policy_version += 1

    def narrowed(
        self, allow: Iterable[str] | None = None, deny: Iterable[str] = ()
    ) -> ToolRegistry:
        """These tools behind a stricter policy; this registry itself is left unchanged.

        The result shares both layers, so a tool registered on either at run time shows in
        both. ``deny`` adds to this registry's deny-list; ``allow`` sets the allow-list where
        this registry has none. With nothing to narrow, this registry itself is returned.

        Raises:
            ConfigError: this registry and ``allow`` carry different allow-lists.
        """
        extra = frozenset(deny)
        if allow is None and not extra:
            return self
        if allow is not None and self.allow is not None and set(self.allow) != set(allow):
            raise ConfigError(
                "Both the registry and the settings have an allow-list: keep one of them "
                "(ToolRegistry(allow=...) or Settings(allow=...) / TOOLTRAY_ALLOW)."
            )
        view = ToolRegistry(self.catalog)
        view.instance = self.instance
        view._policy = Policy(self.allow if allow is None else allow, self.deny | extra)
        return view

    # -- mutation -----------------------------------------------------------------------------

    def register(self, spec: ToolSpec, fn: Executor | None = None) -> ToolSpec:
        """Add ``spec`` (and optionally the callable that runs it) to the instance layer.

        Sends ``tools-registered`` (sender: this registry) once the tool is in, so listeners
        such as the trinket can check it against the catalog; a listener cannot refuse it.
        """
        with self._lock:
            self.catalog.check(spec, "instance")
            self.instance.add(spec, fn)
        tools_registered.send(self, payload=ToolsRegistered(tools=[spec.name]))
        return spec

    def register_callable(self, fn: Callable[..., Any], **kwargs: Any) -> ToolSpec:
        """Describe ``fn`` with :func:`from_callable` and register it with itself as executor."""
        from tooltray.tools.importers.callable import from_callable

        return self.register(from_callable(fn, **kwargs), fn)

    def unregister(self, name: str) -> ToolSpec:
        """Remove an instance-layer tool; catalog tools are shared, so deny them instead."""
        with self._lock:
            if self.instance.find(name) is None and self.catalog.find(name) is not None:
                raise TooltrayError(
                    f"Tool {shown(name)} belongs to the shared catalog layer and cannot be "
                    f"unregistered here; hide it from this registry with deny={{{shown(name)}}}."
                )
            return self.instance.remove(name)

    def add_bundle(self, bundle: Bundle) -> None:
        """Describe a bundle for this registry (overrides the catalog layer's description)."""
        self.instance.add_bundle(bundle)

    # -- queries ------------------------------------------------------------------------------

    def _view(self) -> _View:
        with self._lock:
            key = (self.catalog.version, self.instance.version, self._policy_version)
            if self._cache is None or self._cache[0] != key:
                self._cache = (key, self._build())
            return self._cache[1]

    def _build(self) -> _View:
        entries: dict[str, Entry] = {}
        keys: dict[str, str] = {}
        loose: dict[str, str | None] = {}
        for entry in self.catalog.entries() + self.instance.entries():
            key, name = clash_key(entry.spec.name), entry.spec.name
            if key in keys:
                old = entries[keys[key]]
                raise DuplicateToolError(clash_message(entry.spec, entry.layer, old))
            entries[name], keys[key] = entry, name
            loose[match_key(name)] = name if match_key(name) not in loose else None
        allowed = tuple(e.spec for e in entries.values() if self._policy.permits(e.spec))
        info = {**self.catalog.bundle_info(), **self.instance.bundle_info()}
        bundles = _bundles(allowed, info)
        fingerprint = _fingerprint(entries, allowed, bundles)
        names = frozenset(s.name for s in allowed)
        return _View(entries, keys, loose, allowed, names, bundles, fingerprint)

    @property
    def version(self) -> int:
        """A counter that grows whenever tools, bundles or the allow/deny lists change."""
        layers: int = self.catalog.version + self.instance.version
        return layers + self._policy_version

    @property
    def fingerprint(self) -> str:
        """sha256 over the allowed tools' names, contents and bundles: a cache key."""
        return self._view().fingerprint

    def allowed(self) -> list[ToolSpec]:
        """Every allowed tool: catalog layer first, then the instance layer, each in order."""
        return list(self._view().allowed)

    def all_tools(self) -> list[ToolSpec]:
        """Every registered tool, allowed or not (for admin views, never for the model)."""
        return [e.spec for e in self._view().entries.values()]

    def bundles(self) -> list[Bundle]:
        """Bundles of allowed tools, in order of first member; tools without a bundle form none."""
        return list(self._view().bundles)

    def get(self, name: str) -> ToolSpec | None:
        """The tool called exactly ``name``, allowed or not; ``None`` if there is none."""
        entry = self._view().entries.get(name)
        return entry.spec if entry else None

    @staticmethod
    def _find(view: _View, name: str) -> Entry | None:
        if not isinstance(name, str):
            return None
        owner = name if name in view.entries else view.keys.get(clash_key(name))
        if owner is None:
            owner = view.loose.get(match_key(name))  # None too when two servers share the key
        return view.entries[owner] if owner is not None else None

    def _entry(self, name: str) -> Entry:
        view = self._view()
        entry = self._find(view, name)
        if entry is None:
            pool = [spec.name for spec in view.allowed]
            raise UnknownToolError(str(name), did_you_mean(str(name), pool))
        if entry.spec.name not in view.allowed_names:
            asked = name if len(name) <= SHOWN_CHARS else f"{name[: SHOWN_CHARS - 1]}…"
            raise ToolNotAllowedError(self._policy.refusal(entry.spec, asked))
        return entry

    def resolve(self, name: str) -> ToolSpec:
        """The allowed tool ``name`` means: exact, else after MCP/server prefix stripping.

        Raises:
            UnknownToolError: no such tool; ``candidates`` holds up to 5 allowed look-alikes.
            ToolNotAllowedError: the tool exists but the allow/deny lists exclude it.
        """
        return self._entry(name).spec

    def is_allowed(self, name: str) -> bool:
        """True if ``name`` resolves to a tool the allow-list permits."""
        view = self._view()
        entry = self._find(view, name)
        return entry is not None and entry.spec.name in view.allowed_names

    def executor(self, name: str) -> Executor | None:
        """The callable registered for the allowed tool ``name`` (``None`` if it has none)."""
        return self._entry(name).fn

    def __len__(self) -> int:
        count: int = len(self._view().allowed)
        return count

    def __repr__(self) -> str:
        view = self._view()
        return f"<ToolRegistry {len(view.allowed)}/{len(view.entries)} allowed v{self.version}>"
