"""Short queries keep only their content words in the forward pass, long ones lose Lucene's stop
words; documents never lose anything."""

from __future__ import annotations

import numpy as np
from tokenizers import Tokenizer

from tooltray.memory.embedders import MiniLMOnnxEmbedder, default_embedder
from tooltray.memory.embedders.minilm import COMPACT_OVER, STOPWORDS, content_mask

LONG = (
    "I would like you to move the file called report.txt out of the documents folder and into "
    "the archive directory, and then list all of the files that are still there by their size."
)


def tokenizer() -> Tokenizer:
    emb = default_embedder()
    emb.embed(["load"])
    tok: Tokenizer = emb._tokenizer
    return tok


def test_a_long_query_keeps_its_content_words_and_special_tokens() -> None:
    enc = tokenizer().encode(LONG)
    assert len(enc.ids) - 2 > COMPACT_OVER
    keep = content_mask(LONG, enc)
    kept = [t for t, k in zip(enc.tokens, keep, strict=True) if k]
    assert kept[0] == "[CLS]" and kept[-1] == "[SEP]"
    assert {"move", "report", "archive", "directory", "list", "size"} <= set(kept)
    assert not STOPWORDS & set(kept[1:-1])
    assert 0 < len(enc.ids) - keep.sum() < len(enc.ids) - 3


def test_short_queries_keep_content_words_and_stop_word_only_texts_are_left_whole() -> None:
    short = "It's freezing in here, what is on my agenda tomorrow?"
    enc = tokenizer().encode(short)
    kept = [t for t, k in zip(enc.tokens, content_mask(short, enc), strict=True) if k]
    assert kept == ["[CLS]", "freezing", "what", "my", "agenda", "[SEP]"]
    only = " ".join(["the and of to into"] * 10)
    assert content_mask(only, tokenizer().encode(only)).all()
    assert content_mask(LONG, tokenizer().encode(LONG), over=None).all()


def test_compaction_touches_queries_only_and_keeps_their_meaning() -> None:
    whole = MiniLMOnnxEmbedder(compact_over=None)
    emb = default_embedder()
    assert np.allclose(emb.embed([LONG], "document"), whole.embed([LONG], "document"), atol=1e-5)
    compact, full = emb.embed([LONG], "query")[0], whole.embed([LONG], "query")[0]
    assert not np.allclose(compact, full, atol=1e-3)
    assert compact @ full > 0.9
    docs = emb.embed(["Move a file to another folder.", "Send an email to a contact."])
    assert compact @ docs[0] > compact @ docs[1] + 0.1


def test_spans_of_a_compacted_query_are_pooled_over_their_own_content_words() -> None:
    text = LONG + " Then write an email to Dana about our meeting on Friday."
    spans = [(0, len(LONG)), (len(LONG) + 1, len(text))]
    vecs = default_embedder().embed_spans(text, spans)
    assert np.allclose(vecs[0], default_embedder().embed([text], "query")[0], atol=1e-5)
    move, mail = default_embedder().embed(["move a file to a folder", "send an email"], "query")
    assert vecs[1] @ move > vecs[1] @ mail and vecs[2] @ mail > vecs[2] @ move
