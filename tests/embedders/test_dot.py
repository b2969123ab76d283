"""``dot_rows`` is the matrix product, computed on the calling thread."""

from __future__ import annotations

import numpy as np

from tooltray.memory.embedders.base import dot_rows


def test_dot_rows_equals_the_matrix_product_for_one_and_many_queries() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((2_000, 48)).astype(np.float32)
    queries = rng.standard_normal((3, 48)).astype(np.float32)
    many = dot_rows(matrix, queries)
    assert many.shape == (3, 2_000) and many.dtype == np.float32
    np.testing.assert_allclose(many, queries @ matrix.T, rtol=1e-4, atol=1e-4)
    one = dot_rows(matrix[::2], queries[0])  # a strided matrix is made contiguous first
    np.testing.assert_allclose(one, (matrix[::2] @ queries[0])[None, :], rtol=1e-4, atol=1e-4)
