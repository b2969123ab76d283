"""The embedding cache and stored tool results."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from tooltray.memory.core.results import ResultShelf
from tooltray.memory.store import Store
from tooltray.tools.errors import StoreError


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url) as opened:
        yield opened


def test_embeddings_round_trip_as_float32(store: Store) -> None:
    rng = np.random.default_rng(0)
    vectors = {f"h{i}": rng.standard_normal(384) for i in range(1200)}  # float64 in, > one chunk
    store.put_embeddings("minilm", vectors)
    wanted = [f"h{i}" for i in range(0, 1300, 3)]
    got = store.get_embeddings("minilm", wanted)
    assert set(got) == {h for h in wanted if h in vectors}
    for key, vector in got.items():
        assert vector.dtype == np.float32 and vector.shape == (384,)
        np.testing.assert_array_equal(vector, vectors[key].astype(np.float32))
    assert store.get_embeddings("other-model", wanted) == {}


def test_duplicate_embeddings_keep_the_first_vector(store: Store) -> None:
    first = np.arange(4, dtype=np.float32)
    store.put_embeddings("e", {"a": first})
    store.put_embeddings("e", {"a": first + 1, "b": first * 2})
    got = store.get_embeddings("e", ["a", "b", "a"])
    np.testing.assert_array_equal(got["a"], first)
    np.testing.assert_array_equal(got["b"], first * 2)


def test_bad_embedding_shape_is_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="1-D vector"):
        store.put_embeddings("e", {"a": np.zeros((2, 3))})
    assert store.get_embeddings("e", ["a"]) == {}


def test_results_round_trip_and_replace(store: Store) -> None:
    text = "line\n" * 5000 + "ünïcödé ✓"
    store.put_result("r1", "s", 3, "grep", text)
    assert store.get_result("r1") == text
    store.put_result("r1", "s", 4, "grep", "short")
    assert store.get_result("r1") == "short"
    assert store.get_result("nope") is None


def test_result_shelf_reads_a_stored_result_after_restart(db_url: str) -> None:
    with Store(db_url) as store:
        shown = ResultShelf(store, max_chars=100).shorten("s", 1, "search", "x" * 950 + "END")
    handle = shown.split("[", 1)[1].split(":", 1)[0]
    with Store(db_url) as reopened:
        assert reopened.get_result(handle) == "x" * 950 + "END"
        page = ResultShelf(reopened, max_chars=100).read(handle, 900)
    assert page.startswith("x" * 50 + "END") and "end of result" in page
