"""The embedding cache: float32 vectors keyed by (embedder id, content hash).

Tool docs change rarely, so their vectors are computed once per embedder and reused across
processes. Large lookups are chunked to stay under the drivers' bound-parameter limits.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import Connection, select

from tooltray.memory.store.tables import EMBEDDINGS, upsert, utcnow
from tooltray.tools.errors import StoreError

CHUNK = 500


def _chunks(items: Sequence[Any], size: int = CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def read_embeddings(
    conn: Connection, embedder_id: str, hashes: Sequence[str]
) -> dict[str, NDArray[np.float32]]:
    """Cached vectors for those of ``hashes`` that are stored (missing ones are absent)."""
    c = EMBEDDINGS.c
    found: dict[str, NDArray[np.float32]] = {}
    for chunk in _chunks(list(dict.fromkeys(hashes))):
        query = select(c.content_hash, c.dim, c.vector).where(
            c.embedder_id == embedder_id, c.content_hash.in_(chunk)
        )
        for content_hash, dim, blob in conn.execute(query):
            vector = np.frombuffer(bytes(blob), dtype=np.float32)
            if vector.shape[0] == dim:
                found[content_hash] = vector.copy()
    return found


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
    }
