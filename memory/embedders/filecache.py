"""One vector cache for every process on a machine: a SQLite file keyed by embedder and text.

The CLI's ``explain``, ``show`` and ``catalog lint``, the gateway and every trinket read tool
vectors from their store first and from this file next, and write to both, so a catalog is
embedded once per machine, store or no store. ``TOOLTRAY_CACHE`` names the file (``off``: no
file); the default lives in the user's cache folder. A cache never breaks a turn: a file that
cannot be read or written is a miss, logged once.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np

from tooltray.memory.embedders.base import EmbeddingCache

ENV = "TOOLTRAY_CACHE"
FILE = "vectors.sqlite"
CHUNK = 500
log = logging.getLogger("tooltray")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors (embedder_id TEXT NOT NULL, content_hash TEXT NOT NULL,"
    " vector BLOB NOT NULL, PRIMARY KEY (embedder_id, content_hash))"
)


_SELECT = "SELECT content_hash, vector FROM vectors WHERE embedder_id = ? AND content_hash IN"


def default_cache_path() -> Path | None:
    """``$TOOLTRAY_CACHE``, ``None`` when it is ``off``, else the user cache folder's file."""
    value = os.environ.get(ENV, "").strip()
    if value.lower() in ("off", "none", "0"):
        return None
    if value:
        return Path(value).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("tooltray")) / FILE


class VectorFile:
    """An :class:`EmbeddingCache` in one SQLite file (a connection per call: thread-safe)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._warned = False
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=5.0)
        conn.execute(_SCHEMA)
        return conn

    def _failed(self, what: str, exc: Exception) -> None:
        with self._lock:
            if not self._warned:
                log.warning("tooltray: vector cache %s: cannot %s (%s)", self.path, what, exc)
            self._warned = True

    def get_embeddings(self, embedder_id: str, hashes: Sequence[str]) -> dict[str, Any]:
        """Cached vectors of ``hashes`` (missing ones absent; an unreadable file is a miss)."""
        keys, found = list(dict.fromkeys(hashes)), {}
        try:
            with closing(self._connect()) as conn:
                for start in range(0, len(keys), CHUNK):
                    chunk = keys[start : start + CHUNK]
                    marks = ",".join("?" * len(chunk))
                    sql = f"{_SELECT} ({marks})"
                    for key, blob in conn.execute(sql, [embedder_id, *chunk]):
                        found[key] = np.frombuffer(blob, dtype=np.float32).copy()
        except (sqlite3.Error, OSError) as exc:
            self._failed("read it", exc)
        return found

    def put_embeddings(self, embedder_id: str, vectors: Mapping[str, Any]) -> None:
        """Keep ``vectors`` (hash -> vector) as float32; a hash already kept stays."""
        rows = [(embedder_id, h, np.asarray(v, np.float32).tobytes()) for h, v in vectors.items()]
        try:
            with closing(self._connect()) as conn, conn:
                conn.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?)", rows)
        except (sqlite3.Error, OSError) as exc:
            self._failed("write it", exc)


class SharedCache:
    """``primary`` (a store, or none) first, then the machine's :class:`VectorFile`; writes go
    to both. A primary that stages writes in a call (the trinket's journal) is bypassed by
    background threads through :meth:`direct`."""

    def __init__(self, primary: EmbeddingCache | None, file: VectorFile) -> None:
        self.primary = primary
        self.file = file

    def get_embeddings(self, embedder_id: str, hashes: Sequence[str]) -> dict[str, Any]:
        """From ``primary``, then the file for what it lacks (found there: copied to primary)."""
        found = dict(self.primary.get_embeddings(embedder_id, hashes)) if self.primary else {}
        missing = [h for h in hashes if h not in found]
        if missing:
            extra = self.file.get_embeddings(embedder_id, missing)
            if extra and self.primary is not None:
                self.primary.put_embeddings(embedder_id, extra)
            found.update(extra)
        return found

    def put_embeddings(self, embedder_id: str, vectors: Mapping[str, Any]) -> None:
        """Into ``primary`` and the file."""
        if self.primary is not None:
            self.primary.put_embeddings(embedder_id, vectors)
        self.file.put_embeddings(embedder_id, vectors)

    def direct(self) -> SharedCache:
        """This cache over ``primary``'s own store, for writes off the turn's thread."""
        store = getattr(self.primary, "store", None)
        return SharedCache(store, self.file) if store is not None else self


def shared(primary: EmbeddingCache | None) -> EmbeddingCache | None:
    """``primary`` layered over the machine's vector file (just ``primary`` when it is off)."""
    path = default_cache_path()
    if path is None:
        return primary
    return SharedCache(primary, VectorFile(path))
