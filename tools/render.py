"""How tools are shown and what they cost: the render paths, a bundle's boilerplate stated once, and
token counts.

One selection drives every path (the text block for models without native tool calling, and
``tools=`` for OpenAI Chat Completions, OpenAI Responses and Anthropic) with the same bytes for the
same input: JSON goes through :func:`canonical_json`, so a stable tool set keeps the provider's
prompt cache warm. Catalogs generated from one API class repeat a sentence in every tool, tokens in
every schema and noise for retrieval, so a span of at least :data:`MIN_WORDS` words shared by most
of a bundle's descriptions is shown once. Tokens are counted offline with the real OpenAI BPE tables
(``bpe-openai``; else ``ceil(chars / 4)``, flagged ``estimated``) and cached per tool, because
selection under a token budget asks every turn.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import math
import sys
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any, NamedTuple, cast

from tooltray.tools.errors import ConfigError
from tooltray.tools.spec import ToolSpec

RENDER_PATHS: tuple[str, ...] = ("text", "openai", "responses", "anthropic")
NATIVE_PATHS: tuple[str, ...] = ("openai", "responses", "anthropic")
_SCALARS = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "null",
    "object": "dict",
}
_MAX_ENUM = 5


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys, no spaces and real UTF-8: the byte-stable form of a payload."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def type_label(schema: Any) -> str:
    """A short type for the text path: ``str``, ``int``, ``list[str]``, ``"a"|"b"``, ``any``."""
    if not isinstance(schema, dict):
        return "any"
    enum = schema.get("enum")
    if isinstance(enum, list) and 0 < len(enum) <= _MAX_ENUM:
        return "|".join(dict.fromkeys([json.dumps(v, ensure_ascii=False) for v in enum]))
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return "|".join(dict.fromkeys([type_label(s) for s in schema[key]]))
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(dict.fromkeys([type_label({**schema, "type": k}) for k in kind]))
    if kind == "array":
        items = schema.get("items")
        return f"list[{type_label(items)}]" if isinstance(items, dict) else "list"
    if isinstance(schema.get("$ref"), str):
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    return _SCALARS.get(str(kind), "any")


def render_line(spec: ToolSpec) -> str:
    """One text-path line: ``name(arg: type, opt?: type) — First sentence.``"""
    props = spec.parameters.get("properties") or {}
    required = set(spec.parameters.get("required") or ())
    args = ", ".join(
        f"{arg}{'' if arg in required else '?'}: {type_label(sub)}" for arg, sub in props.items()
    )
    head = f"{spec.name}({args})"
    first = spec.first_sentence()
    return f"{head} — {first}" if first else head


def render_text(tools: Sequence[ToolSpec]) -> str:
    """The text block: one line per tool, in the given order, joined by newlines."""
    return "\n".join(map(render_line, tools))


def openai_chat_tool(spec: ToolSpec) -> dict[str, Any]:
    """One Chat Completions entry: ``{"type": "function", "function": {...}}``."""
    function = {
        "name": spec.name,
        "description": spec.description,
        "parameters": copy.deepcopy(spec.parameters),
    }
    return {"type": "function", "function": function}


def openai_responses_tool(spec: ToolSpec) -> dict[str, Any]:
    """One Responses API entry (flat; ``strict: false`` because the API defaults to strict)."""
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": copy.deepcopy(spec.parameters),
        "strict": False,
    }


def anthropic_tool(spec: ToolSpec) -> dict[str, Any]:
    """One Anthropic Messages entry: ``{"name", "description", "input_schema"}``."""
    return {
        "name": spec.name,
        "description": spec.description,
        "input_schema": copy.deepcopy(spec.parameters),
    }


def render_openai_chat(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """``tools=`` for OpenAI Chat Completions (and compatible servers: vLLM, llama.cpp, ...)."""
    return [openai_chat_tool(t) for t in tools]


def render_openai_responses(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """``tools=`` for the OpenAI Responses API."""
    return [openai_responses_tool(t) for t in tools]


def render_anthropic(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """``tools=`` for the Anthropic Messages API."""
    return [anthropic_tool(t) for t in tools]


_ONE: dict[str, Callable[[ToolSpec], dict[str, Any]]] = {
    "openai": openai_chat_tool,
    "responses": openai_responses_tool,
    "anthropic": anthropic_tool,
}


def render_native(path: str, tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """``tools=`` entries for a native ``path`` (``text`` has none and renders as OpenAI chat)."""
    one = _ONE.get(path, openai_chat_tool)
    return [one(t) for t in tools]


def check_path(path: str) -> str:
    """Return ``path`` if it is one of :data:`RENDER_PATHS`, else raise ``ConfigError``."""
    if path not in RENDER_PATHS:
        raise ConfigError(f"Unknown render path {path!r}: use one of {', '.join(RENDER_PATHS)}.")
    return path


def render_one(path: str, spec: ToolSpec) -> str:
    """One tool as the exact string it contributes on ``path`` (line or canonical JSON)."""
    if check_path(path) == "text":
        return render_line(spec)
    return canonical_json(_ONE[path](spec))


def render(path: str, tools: Sequence[ToolSpec]) -> str:
    """The canonical string sent for ``tools`` on ``path``: the text block or the JSON list."""
    if check_path(path) == "text":
        return render_text(tools)
    return canonical_json(render_native(path, tools))


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


ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
_CACHE_LIMIT = 200_000
_CHUNK = 50_000  # chars; keeps each encode call under bpe-openai's 200k-token/1M-char limits
_lock = threading.Lock()
_counters: dict[str, Callable[[str], int] | None] = {}
_BINDINGS = "bpe_openai._bindings"
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


def _counter(encoding: str) -> Callable[[str], int] | None:
    if encoding not in ENCODINGS:
        raise ConfigError(f"Unknown encoding {encoding!r}: use one of {', '.join(ENCODINGS)}.")
    with _lock:
        if encoding not in _counters:
            _counters[encoding] = _table(encoding)
        return _counters[encoding]


def _table(encoding: str) -> Callable[[str], int] | None:
    """How bpe-openai counts ``encoding``'s tokens; None when it is not installed."""
    try:
        return cast(Callable[[str], int], _bindings().tokenizer_for_encoding(encoding).count)
    except ImportError:
        pass  # not installed, or laid out otherwise: its public API decides
    try:
        with warnings.catch_warnings():  # its table loader uses a deprecated API
            warnings.simplefilter("ignore", DeprecationWarning)
            import bpe_openai

            table = bpe_openai.get_encoding(encoding)
    except ImportError:
        return None
    return lambda text: len(table.encode_ordinary(text))


def _bindings() -> Any:
    """bpe-openai's compiled tokenizer module, loaded without the package's ``__init__``.

    That ``__init__`` decodes three whole BPE tables in Python only to read their special
    tokens, while counting runs in the compiled tokenizer alone: every process that counts
    tokens (an agent, a gateway start, a CLI run) paid for it (``bench/README.md``, issue 34).
    Raises ImportError when the package or its module is missing.
    """
    if "bpe_openai" in sys.modules and sys.modules["bpe_openai"] is None:
        raise ImportError("bpe_openai is blocked")  # as `import bpe_openai` would
    loaded = sys.modules.get(_BINDINGS)
    if loaded is not None:
        return loaded
    spec = importlib.util.find_spec("bpe_openai")
    folders = list(spec.submodule_search_locations or []) if spec else []
    found = [f / f"_bindings{x}" for f in map(Path, folders) for x in EXTENSION_SUFFIXES]
    path = next((p for p in found if p.is_file()), None)
    module_spec = importlib.util.spec_from_file_location(_BINDINGS, path) if path else None
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"{_BINDINGS} not found")
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    sys.modules[_BINDINGS] = module  # the package, imported later, reuses it (loaded once)
    return module


def clear_caches() -> None:
    """Forget loaded encoders and cached per-tool counts (after installing ``bpe-openai``)."""
    with _lock:
        _counters.clear()
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
    count = _counters.get(encoding) or _counter(encoding)  # a loaded table needs no lock
    if count is None:
        return TokenCount(math.ceil(len(text) / 4), encoding, True)
    try:  # one piece (nearly every text): no cutting, no sum
        n = count(text) if len(text) <= _CHUNK else sum(map(count, _chunks(text)))
    except UnicodeEncodeError:  # lone surrogates count as U+FFFD, as bpe-openai's own API does
        fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return count_tokens(fixed, encoding)
    return TokenCount(n, encoding, False)


def is_estimated(encoding: str = "o200k_base") -> bool:
    """True if counts for ``encoding`` are ``chars/4`` estimates."""
    return _counter(encoding) is None


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
