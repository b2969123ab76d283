"""The embedding cache: float32 vectors keyed by (embedder id, content hash).

Tool docs change rarely, so their vectors are computed once per embedder and reused across
processes. Large lookups are chunked to stay under the drivers' bound-parameter limits. Each
vector remembers when an index last looked it up (``used_at``, refreshed at most every
:data:`TOUCH_EVERY`, so a store that is read all day is written once a day): retention drops the
vectors no catalog has asked for since its cutoff, those of tools no longer in any catalog.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Connection, select, update

from tooltray.memory.store.tables import EMBEDDINGS, upsert, utcnow
from tooltray.tools.errors import StoreError

CHUNK = 500
TOUCH_EVERY = timedelta(days=1)
"""How stale ``used_at`` may get before a lookup refreshes it (far below any retention age)."""


def _chunks(items: Sequence[Any], size: int = CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def read_embeddings(
    conn: Connection, embedder_id: str, hashes: Sequence[str], stale: list[str] | None = None
) -> dict[str, NDArray[np.float32]]:
    """Cached vectors for those of ``hashes`` that are stored (missing ones are absent);
    the found hashes last used over :data:`TOUCH_EVERY` ago are appended to ``stale``."""
    c = EMBEDDINGS.c
    found: dict[str, NDArray[np.float32]] = {}
    due = utcnow() - TOUCH_EVERY
    for chunk in _chunks(list(dict.fromkeys(hashes))):
        query = select(c.content_hash, c.dim, c.vector, c.used_at).where(
            c.embedder_id == embedder_id, c.content_hash.in_(chunk)
        )
        for content_hash, dim, blob, used_at in conn.execute(query):
            vector = np.frombuffer(bytes(blob), dtype=np.float32)
            if vector.shape[0] == dim:
                found[content_hash] = vector.copy()
            if stale is not None and used_at < due:
                stale.append(content_hash)
    return found


def touch_embeddings(
    conn: Connection, embedder_id: str, hashes: Sequence[str], now: datetime | None = None
) -> int:
    """Record that an index used these vectors now (``now``: a test's clock); how many."""
    c, at, touched = EMBEDDINGS.c, now or utcnow(), 0
    for chunk in _chunks(list(hashes)):
        where = (c.embedder_id == embedder_id) & c.content_hash.in_(chunk)
        touched += int(conn.execute(update(EMBEDDINGS).where(where).values(used_at=at)).rowcount)
    return touched


def write_embeddings(
    conn: Connection, embedder_id: str, vectors: Mapping[str, NDArray[Any]]
) -> None:
    """Store ``vectors`` as float32 bytes; a hash already cached for this embedder is kept."""
    now = utcnow()
    rows = [_row(embedder_id, h, v, now) for h, v in vectors.items()]
    stmt = upsert(conn, EMBEDDINGS).on_conflict_do_nothing(
        index_elements=["embedder_id", "content_hash"]
    )
    for chunk in _chunks(rows):
        conn.execute(stmt, list(chunk))


def _row(embedder_id: str, content_hash: str, vector: NDArray[Any], now: Any) -> dict[str, Any]:
    array = np.ascontiguousarray(vector, dtype=np.float32)
    if array.ndim != 1 or array.shape[0] == 0:
        raise StoreError(
            f"embedding for {content_hash!r} has shape {array.shape}: "
            "store one non-empty 1-D vector per content hash"
        )
    return {
        "embedder_id": embedder_id,
        "content_hash": content_hash,
        "dim": int(array.shape[0]),
        "vector": array.tobytes(),
        "created_at": now,
        "used_at": now,
    }
