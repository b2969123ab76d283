"""The gateway's own small state, kept in a JSON file next to the store.

Three maps, read at start-up and written whenever they change: ``tools``, the fingerprint of
each upstream tool (``server/tool``) as first seen or last accepted; ``pending``, a changed
fingerprint held back until accepted; and ``owners``, the credential (a hash, never the token)
that opened each named session. A file rather than store tables: the
gateway is one process per store, and these need no query, migration or history.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from sqlalchemy.engine import make_url

from tooltray.memory.config import Settings
from tooltray.memory.store.url import resolve_url
from tooltray.tools.errors import ConfigError

log = logging.getLogger("tooltray.gateway")
DEFAULT_FILE = "tooltray-gateway.json"


def state_path(settings: Settings) -> Path | None:
    """Where the state lives: ``gateway_state``, else next to a SQLite file, else ``./``.

    ``None`` for an in-memory SQLite store (the state then lives as long as the process).
    """
    if settings.gateway_state is not None:
        return settings.gateway_state
    url = make_url(resolve_url(settings.db))
    if url.get_backend_name() != "sqlite":
        return Path.cwd() / DEFAULT_FILE
    if not url.database or url.database == ":memory:":
        return None
    return Path(f"{url.database}.gateway.json")


class GatewayState:
    """The maps and their file: ``tools`` (accepted fingerprints), ``pending`` (changed ones
    held back until accepted) and ``owners``.

    Saving merges with the file as it is now: a key this process set wins, any other key keeps
    the file's value, so ``tooltray mcp accept`` run beside a live gateway is not undone.

    Args:
        path: the JSON file (``None``: kept in memory only).

    Raises:
        ConfigError: the file exists but is not the gateway's JSON.
    """

    MAPS = ("tools", "pending", "owners")

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        data = self._read()
        self.maps: dict[str, dict[str, str]] = {m: dict(data.get(m, {})) for m in self.MAPS}
        self._set: dict[str, set[str]] = {m: set() for m in self.MAPS}
        self._dropped: dict[str, set[str]] = {m: set() for m in self.MAPS}

    @property
    def tools(self) -> dict[str, str]:
        """Accepted fingerprints by ``server/tool``."""
        return self.maps["tools"]

    @property
    def pending(self) -> dict[str, str]:
        """Changed fingerprints by ``server/tool``, held back until accepted."""
        return self.maps["pending"]

    @property
    def owners(self) -> dict[str, str]:
        """The credential id that opened each named session."""
        return self.maps["owners"]

    def put(self, which: str, key: str, value: str) -> None:
        """Set one entry (saved by :meth:`save`)."""
        self.maps[which][key] = value
        self._set[which].add(key)
        self._dropped[which].discard(key)

    def drop(self, which: str, key: str) -> None:
        """Remove one entry (saved by :meth:`save`)."""
        self.maps[which].pop(key, None)
        self._dropped[which].add(key)
        self._set[which].discard(key)

    def _read(self) -> dict[str, dict[str, str]]:
        if self.path is None or not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"gateway state {str(self.path)!r} cannot be read ({exc}); move it aside "
                "(tools are then seen afresh) or set gateway_state to another file."
            ) from exc
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise ConfigError(
                f"gateway state {str(self.path)!r} is not the gateway's JSON; move it aside."
            )
        return data

    def save(self) -> None:
        """Merge this process's changes into the file (atomically: old file or new one)."""
        if self.path is None:
            return
        with self._lock:
            try:
                disk = self._read()
            except ConfigError:
                disk = {}
            for m in self.MAPS:
                merged = {**disk.get(m, {}), **{k: self.maps[m][k] for k in self._set[m]}}
                for key in self._dropped[m]:
                    merged.pop(key, None)
                self.maps[m] = merged
            self._write(json.dumps(self.maps, sort_keys=True, indent=1))

    def _write(self, body: str) -> None:
        assert self.path is not None
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            temp.write_text(body, encoding="utf-8")
            os.replace(temp, self.path)
        except OSError as exc:  # the next change tries again; serving goes on
            log.warning("tooltray gateway: could not write %s: %s", self.path, exc)
