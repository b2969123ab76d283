"""Text no encoder takes (a lone surrogate from ``json.loads``, a NUL) is embedded, not raised on:
the tokenizer raised TypeError, and ``handle_meta``, documented never to raise, passed it on."""

from __future__ import annotations

import json

import numpy as np

from tooltray.memory.embedders import default_embedder


def test_a_lone_surrogate_is_embedded_like_the_replacement_character() -> None:
    odd = json.loads('"weather in Oslo \\ud800"')
    emb = default_embedder()
    got = emb.embed([odd, "a\x00b"], kind="query")
    want = emb.embed(["weather in Oslo \ufffd", "a\ufffdb"], kind="query")
    assert got.shape == want.shape and np.allclose(got, want)
    assert np.allclose(emb.embed_spans(odd, [(0, 7)])[0], want[0], atol=1e-5)
