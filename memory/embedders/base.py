"""What an embedder is: a stable id, a dimension, and ``embed(texts, kind)`` -> unit rows.

Asymmetric models (e5: ``query:`` vs ``passage:``) embed a user message and a tool document
differently, so the protocol carries ``kind``; symmetric models (MiniLM) ignore it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

Kind = Literal["query", "document"]
Vectors = NDArray[np.float32]
Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` while a catalog's documents are embedded."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows ``(n, dim)``; names itself stably.

    ``id`` keys cached document vectors, so it must change whenever the vectors would (model,
    variant, server). Failures raise :class:`tooltray.tools.errors.EmbedderError`.
    """

    @property
    def id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> Vectors: ...


def normalise(matrix: NDArray[Any]) -> Vectors:
    """Rows scaled to unit length as float32 (all-zero rows stay zero)."""
    rows = np.asarray(matrix, dtype=np.float32)
    if rows.ndim == 1:
        rows = rows[None, :]
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: Vectors = (rows / np.maximum(norms, 1e-12)).astype(np.float32)
    return out


def empty(dim: int) -> Vectors:
    """A ``(0, dim)`` float32 matrix: what embedding no texts returns."""
    return np.zeros((0, dim), dtype=np.float32)
