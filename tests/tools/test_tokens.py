"""Token counting: real BPE tables, the labelled estimate fallback, per-tool caching."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tooltray.tools.errors import ConfigError
from tooltray.tools.importers.catalog import load_catalog
from tooltray.tools.render import (
    RENDER_PATHS,
    TokenCount,
    block_tokens,
    count_tokens,
    is_estimated,
    render,
    render_one,
    tokens_per_tool,
)
from tooltray.tools.spec import ToolSpec

# the module, not the function of the same name the package exports lazily (which of the two
# `from tooltray.tools import render` gives depends on what was imported before)
shown = importlib.import_module("tooltray.tools.render")


@pytest.fixture(autouse=True)
def fresh_caches() -> Iterator[None]:
    shown.clear_caches()
    yield
    shown.clear_caches()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_known_counts_and_encodings_differ() -> None:
    import bpe_openai

    text = "Bonjour — 東京の天気を教えてください. def f(x): return x**2"
    o200k, cl100k = count_tokens(text), count_tokens(text, "cl100k_base")
    assert o200k == TokenCount(
        len(bpe_openai.get_encoding("o200k_base").encode(text)), "o200k_base", False
    )
    assert cl100k.encoding == "cl100k_base" and not cl100k.estimated
    assert o200k.n != cl100k.n
    assert count_tokens("hello world").n == 2
    assert count_tokens("").n == 0


def test_special_token_text_counts_as_plain_text() -> None:
    assert count_tokens("<|endoftext|>").n > 1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_long_text_chunks_count_like_one_pass() -> None:
    text = " ".join(f"word{i} {'x' * (i % 7)}" for i in range(30_000))
    assert len(text) > 3 * 50_000
    import bpe_openai

    single = len(bpe_openai.get_encoding("o200k_base").encode_ordinary(text))
    assert count_tokens(text).n == single


def test_estimate_when_bpe_openai_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # import now raises ImportError
    shown.clear_caches()
    count = count_tokens("x" * 9)
    assert count == TokenCount(3, "o200k_base", True)
    assert is_estimated()
    spec = ToolSpec(name="t", description="A tool.")
    assert tokens_per_tool([spec], "text") == {"t": -(-len(render_one("text", spec)) // 4)}


def test_unknown_encoding() -> None:
    with pytest.raises(ConfigError, match="o200k_base, cl100k_base"):
        count_tokens("x", "p50k_base")


def test_per_tool_counts_and_block(tools: list[ToolSpec]) -> None:
    for path in RENDER_PATHS:
        per = tokens_per_tool(tools, path)
        assert list(per) == [t.name for t in tools]
        assert per["read_file"] == count_tokens(render_one(path, tools[0])).n
        block = block_tokens(tools, path)
        assert block == count_tokens(render(path, tools)).n
        assert abs(block - sum(per.values())) <= len(tools) + 2
    assert tokens_per_tool(tools, "text")["now"] < tokens_per_tool(tools, "openai")["now"]


def test_per_tool_cache_is_keyed_by_content(
    tools: list[ToolSpec], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = tokens_per_tool(tools, "anthropic")
    calls: list[str] = []
    real = shown.count_tokens

    def spy(text: str, encoding: str = "o200k_base") -> TokenCount:
        calls.append(text)
        return real(text, encoding)

    monkeypatch.setattr(shown, "count_tokens", spy)
    rebuilt = [ToolSpec.model_validate_json(t.model_dump_json()) for t in tools]
    assert tokens_per_tool(rebuilt, "anthropic") == first
    assert calls == []
    tokens_per_tool(tools, "anthropic", "cl100k_base")
    assert len(calls) == len(tools)


def test_bfcl_multiturn_costs_match_reference() -> None:
    specs, _ = load_catalog(Path("/work/shared/data/bfcl_multiturn/tools.jsonl"))
    anthropic = block_tokens(specs, "anthropic")
    assert 12_000 < anthropic < 14_000  # data README: 12,842 o200k tokens for all tools
    assert block_tokens(specs, "text") < anthropic / 2


def test_a_long_path_keeps_its_file_name() -> None:
    from tooltray.tools.errors import shown_path

    deep = "/tmp/" + "nested-folder/" * 12 + "bad.json"
    quoted = shown_path(deep)
    assert len(quoted) <= 80 and quoted.endswith("bad.json'") and quoted.startswith("'/tmp/")
    assert shown_path("/tmp/short.json") == "'/tmp/short.json'"


ODD_TEXTS = [
    "",
    "hello world",
    "a\ud800b lone surrogate",
    "東京 🌧️ naïve",
    "<|endoftext|> x",
    "\n\t  ",
]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_counts_equal_bpe_openais_own_encoding(encoding: str) -> None:
    """Counting goes to bpe-openai's compiled tokenizer directly: the same counts as its public
    ``Encoding``, lone surrogates included."""
    import bpe_openai

    public = bpe_openai.get_encoding(encoding)
    for text in ODD_TEXTS:
        assert count_tokens(text, encoding).n == len(public.encode_ordinary(text)), text


def test_counting_does_not_run_bpe_openais_package_init() -> None:
    """A process that counts tokens loads only bpe-openai's compiled module: its ``__init__``
    decodes three whole BPE tables in Python (see ``render._bindings``)."""
    code = (
        "import sys; from tooltray.tools.render import count_tokens; "
        "print(count_tokens('hello world').n, 'bpe_openai' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["2", "False"]
