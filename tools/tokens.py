"""Count the tokens a tool block costs, offline, with the real OpenAI BPE tables.

``bpe-openai`` ships ``o200k_base`` and ``cl100k_base`` (tiktoken needs a download). Without it
the count falls back to ``ceil(chars / 4)`` and says so (``estimated=True``). Per-tool counts
are cached by (content hash, path, encoding, backend) because selection under a token budget
asks for them every turn.
"""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

from tooltray.tools.errors import ConfigError
from tooltray.tools.render import check_path, render, render_one
from tooltray.tools.spec import ToolSpec

ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
_CACHE_LIMIT = 200_000
_CHUNK = 50_000  # chars; keeps each encode call under bpe-openai's 200k-token/1M-char limits
_lock = threading.Lock()
_encoders: dict[str, Any] = {}
_per_tool: dict[tuple[str, str, str, bool], int] = {}
_hashes: dict[int, tuple[ToolSpec, str]] = {}


class TokenCount(NamedTuple):
    """A token count and how it was obtained.

    Attributes:
        n: number of tokens.
        encoding: the BPE table used (or meant, when estimated).
        estimated: True when ``bpe-openai`` was unavailable and ``ceil(chars/4)`` was used.
    """

    n: int
    encoding: str
    estimated: bool


def _encoder(encoding: str) -> Any | None:
    if encoding not in ENCODINGS:
        raise ConfigError(f"Unknown encoding {encoding!r}: use one of {', '.join(ENCODINGS)}.")
    with _lock:
        if encoding not in _encoders:
            try:
                with warnings.catch_warnings():  # its table loader uses a deprecated API
                    warnings.simplefilter("ignore", DeprecationWarning)
                    import bpe_openai

                    _encoders[encoding] = bpe_openai.get_encoding(encoding)
            except ImportError:
                _encoders[encoding] = None
        return _encoders[encoding]


def clear_caches() -> None:
    """Forget loaded encoders and cached per-tool counts (after installing ``bpe-openai``)."""
    with _lock:
        _encoders.clear()
        _per_tool.clear()
        _hashes.clear()


def _content_hash(spec: ToolSpec) -> str:
    """``spec.content_hash``, remembered per object (the spec is kept so its id stays unique)."""
    hit = _hashes.get(id(spec))
    if hit is not None and hit[0] is spec:
        return hit[1]
    digest: str = spec.content_hash
    with _lock:
        if len(_hashes) >= _CACHE_LIMIT:
            _hashes.clear()
        _hashes[id(spec)] = (spec, digest)
    return digest


def _seam(text: str, end: int) -> int:
    """A cut point near ``end`` just before a lone space, where BPE pre-tokens split anyway."""
    at = text.rfind(" ", end // 2, end)
    while at > end // 2 and (text[at - 1].isspace() or text[at + 1].isspace()):
        at = text.rfind(" ", end // 2, at)
    return at if at > end // 2 else end


def _chunks(text: str) -> list[str]:
    out: list[str] = []
    while len(text) > _CHUNK:
        cut = _seam(text, _CHUNK)
        out.append(text[:cut])
        text = text[cut:]
    return [*out, text]


def count_tokens(text: str, encoding: str = "o200k_base") -> TokenCount:
    """Tokens of ``text`` as plain text (special-token strings count as ordinary text).

    Long texts are encoded in pieces cut before a lone space, where the BPE pre-tokenizer
    splits too, so the total equals a single pass.
    """
    encoder = _encoder(encoding)
    if encoder is None:
        return TokenCount(math.ceil(len(text) / 4), encoding, True)
    n = sum(len(encoder.encode_ordinary(part)) for part in _chunks(text))
    return TokenCount(n, encoding, False)


def is_estimated(encoding: str = "o200k_base") -> bool:
    """True if counts for ``encoding`` are ``chars/4`` estimates."""
    return _encoder(encoding) is None


def tokens_per_tool(
    tools: Sequence[ToolSpec], path: str, encoding: str = "o200k_base"
) -> dict[str, int]:
    """Tokens each tool adds on ``path`` (its line, or its canonical JSON entry)."""
    check_path(path)
    estimated = is_estimated(encoding)
    out: dict[str, int] = {}
    for spec in tools:
        key = (_content_hash(spec), path, encoding, estimated)
        cached = _per_tool.get(key)
        if cached is None:
            cached = count_tokens(render_one(path, spec), encoding).n
            with _lock:
                if len(_per_tool) >= _CACHE_LIMIT:
                    _per_tool.clear()
                _per_tool[key] = cached
        out[spec.name] = cached
    return out


def block_tokens(tools: Sequence[ToolSpec], path: str, encoding: str = "o200k_base") -> int:
    """Tokens of the whole rendered block on ``path``, exactly as it would be sent."""
    return count_tokens(render(path, tools), encoding).n
