"""Text that every layer can encode: lone surrogates and NUL characters replaced.

``json.loads`` turns ``"\\ud800"`` into a lone surrogate that UTF-8 cannot encode (SQLite,
PostgreSQL and the tokenizer all refuse it), and PostgreSQL text cannot hold NUL. Text from a
model or a caller is cleaned where it enters, so one odd character never reaches a store write
or the embedder; U+FFFD keeps the text's length, so character offsets stay valid.
"""

from __future__ import annotations

import re
from typing import Any

_BAD = re.compile("[\ud800-\udfff\x00]")
REPLACEMENT = "\ufffd"
MAX_DEPTH = 32


def clean_text(text: str) -> str:
    """``text`` with each lone surrogate and NUL replaced by U+FFFD (ASCII-free text is checked
    once; plain ASCII is returned as is)."""
    if text.isascii() and "\x00" not in text:
        return text
    return _BAD.sub(REPLACEMENT, text)


def has_bad_text(text: str) -> bool:
    """Whether :func:`clean_text` would change ``text``."""
    return _BAD.search(text) is not None


def clean_value(value: Any, depth: int = 0) -> Any:
    """A JSON-like value with every string (keys too) cleaned; deeper than ``MAX_DEPTH`` levels
    a container is kept as it is (the callers bound depth themselves where it matters)."""
    if isinstance(value, str):
        return clean_text(value)
    if depth >= MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {
            clean_text(k) if isinstance(k, str) else k: clean_value(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [clean_value(v, depth + 1) for v in value]
    return value
