"""Cosine rows of unit vectors against a matrix of them, on one thread and predictably.

``matrix @ vector`` hands a 10,000 x 384 product to BLAS, which splits it over threads. Right
after an onnxruntime query embedding (whose worker threads still spin) or on a busy machine,
those threads wait on each other: measured on this 2-core machine, 6 to 8 ms for 10,000 rows
where one thread takes 1.5 to 2 ms. ``einsum`` runs the same product on the calling thread. At
1,000 rows both take about 0.2 ms (BLAS does not split products that small).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def dot_rows(matrix: NDArray[np.float32], vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    """``vectors @ matrix.T`` as ``(len(vectors), len(matrix))`` float32, one row at a time.

    Args:
        matrix: ``(n, d)`` rows (tool documents, past requests).
        vectors: ``(k, d)`` queries, or one ``(d,)`` query (then the result is ``(1, n)``).
    """
    queries = np.atleast_2d(np.asarray(vectors, np.float32))
    rows = np.ascontiguousarray(matrix, np.float32)
    out = np.empty((len(queries), len(rows)), np.float32)
    for k, query in enumerate(queries):
        np.einsum("ij,j->i", rows, query, out=out[k])
    return out
