"""The gateway's own small state, kept in a JSON file next to the store.

Two maps, both read at start-up and written whenever they change: ``tools``, the fingerprint of
each upstream tool (``server/tool``) as first seen and accepted, and ``owners``, the credential
(a hash, never the token) that opened each named session. A file rather than store tables: the
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
    """The two maps and their file.

    Args:
        path: the JSON file (``None``: kept in memory only).

    Raises:
        ConfigError: the file exists but is not the gateway's JSON.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        data = self._read()
        self.tools: dict[str, str] = dict(data.get("tools", {}))
        self.owners: dict[str, str] = dict(data.get("owners", {}))

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
        """Write both maps (atomically: a crash leaves the old file or the new one)."""
        if self.path is None:
            return
        with self._lock:
            body = json.dumps({"tools": self.tools, "owners": self.owners}, sort_keys=True)
            temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            try:
                temp.write_text(body, encoding="utf-8")
                os.replace(temp, self.path)
            except OSError as exc:  # the next change tries again; serving goes on
                log.warning("tooltray gateway: could not write %s: %s", self.path, exc)
