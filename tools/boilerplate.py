"""Text most of a bundle's descriptions share: find it, and state it once instead of in each tool.

Catalogs generated from one API class often repeat a sentence in every tool ("This tool belongs
to the Gorilla file system. It is a simple file system that ..."): tokens in every schema, and
noise for BM25 and the embedder alike. A span counts when at least :data:`MIN_WORDS` consecutive
words recur verbatim in more than half of a bundle's descriptions (and in at least
:data:`MIN_MEMBERS` of them), so a shared phrase such as "the user's account" never does.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from tooltray.tools.spec import ToolSpec

MIN_WORDS = 8
MIN_MEMBERS = 3
SHARE = 0.5

Gram = tuple[str, ...]


def _grams(words: Sequence[str], n: int) -> set[Gram]:
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _runs(words: Sequence[str], common: set[Gram], n: int) -> list[str]:
    """Maximal word runs of ``words`` covered by consecutive common n-grams."""
    runs: list[str] = []
    i = 0
    while i <= len(words) - n:
        if tuple(words[i : i + n]) not in common:
            i += 1
            continue
        j = i
        while j + 1 <= len(words) - n and tuple(words[j + 1 : j + 1 + n]) in common:
            j += 1
        runs.append(" ".join(words[i : j + n]))
        i = j + n
    return runs


def shared_spans(descriptions: Sequence[str], min_words: int = MIN_WORDS) -> list[str]:
    """Verbatim spans (whitespace-normalised) found in more than half of ``descriptions``.

    Longest first; each span is at least ``min_words`` words long. Fewer than
    :data:`MIN_MEMBERS` descriptions never share boilerplate.
    """
    texts = [desc.split() for desc in descriptions]
    need = max(MIN_MEMBERS, math.floor(len(texts) * SHARE) + 1)
    if len(texts) < need:
        return []
    df = Counter(g for words in texts for g in _grams(words, min_words))
    common = {g for g, c in df.items() if c >= need}
    if not common:
        return []
    richest = max(texts, key=lambda words: len(_grams(words, min_words) & common))
    joined = [" ".join(words) for words in texts]
    spans = [s for s in _runs(richest, common, min_words) if members(s, joined) >= need]
    return sorted(dict.fromkeys(spans), key=len, reverse=True)


def members(span: str, texts: Sequence[str]) -> int:
    """How many of the (whitespace-normalised) ``texts`` contain ``span``."""
    return sum(1 for text in texts if span in text)


def strip_spans(description: str, spans: Sequence[str]) -> str:
    """``description`` without ``spans`` (whitespace normalised when any span occurs)."""
    text = " ".join(description.split())
    out = text
    for span in spans:
        out = out.replace(span, " ")
    return text if out == text else " ".join(out.split())


def bundle_spans(tools: Sequence[ToolSpec]) -> dict[str, list[str]]:
    """Bundle name -> its shared spans, over every tool given (the whole catalog, not a pick)."""
    groups: dict[str, list[str]] = {}
    for spec in tools:
        if spec.bundle is not None:
            groups.setdefault(spec.bundle, []).append(spec.description)
    found = {name: shared_spans(texts) for name, texts in groups.items()}
    return {name: spans for name, spans in found.items() if spans}


def state_once(tools: Sequence[ToolSpec], spans: Mapping[str, Sequence[str]]) -> list[ToolSpec]:
    """``tools`` with each bundle's shared spans kept on its first tool here and cut elsewhere.

    The first tool of a bundle in ``tools`` keeps its full description; since the loaded set
    only grows by appending, earlier tools keep their bytes and the prompt cache stays warm.
    """
    seen: set[str] = set()
    out: list[ToolSpec] = []
    for spec in tools:
        cut = spans.get(spec.bundle or "") if spec.bundle is not None else None
        if not cut or spec.bundle in seen:
            out.append(spec if not cut else _cut(spec, cut))
        else:
            out.append(spec)
        if spec.bundle is not None:
            seen.add(spec.bundle)
    return out


def strip_all(tools: Sequence[ToolSpec], spans: Mapping[str, Sequence[str]]) -> list[ToolSpec]:
    """``tools`` with every bundle member's shared spans cut (what retrieval should match)."""
    return [_cut(s, spans.get(s.bundle or "", ())) for s in tools]


def _cut(spec: ToolSpec, spans: Sequence[str]) -> ToolSpec:
    if not spans:
        return spec
    text = strip_spans(spec.description, spans)
    return spec if text == spec.description else spec.model_copy(update={"description": text})
