"""Result compression: short results pass unchanged, long ones page back exactly."""

from __future__ import annotations

import re

from tooltray.memory.core.results import ResultShelf
from tooltray.memory.store import MemoryStore


def test_short_result_is_unchanged() -> None:
    assert ResultShelf(MemoryStore(), 100).shorten("s", 1, "t", "x" * 100) == "x" * 100


def test_long_result_pages_back_to_the_full_text() -> None:
    shelf = ResultShelf(MemoryStore(), 100)
    text = "".join(chr(65 + i % 26) for i in range(1234))
    first = shelf.shorten("s", 1, "t", text)
    handle = re.search(r"(r-[0-9a-f]{32})", first).group(1)  # type: ignore[union-attr]
    assert first.startswith(text[:100]) and "1134 more characters" in first
    pages, offset = [first[:100]], 100
    while offset < len(text):
        page = shelf.read(handle, offset)
        pages.append(page[: min(100, len(text) - offset)])
        offset += 100
    assert "".join(pages) == text
    assert "end of result" in shelf.read(handle, 1200)
    assert "past the end" in shelf.read(handle, 5000)
    assert "no stored result" in shelf.read("r-nope")


def test_a_handle_reads_only_in_its_own_session() -> None:
    shelf = ResultShelf(MemoryStore(), 100)
    first = shelf.shorten("alice", 1, "t", "a" * 500)
    handle = re.search(r"(r-[0-9a-f]{32})", first).group(1)  # type: ignore[union-attr]
    assert shelf.reader("alice")(handle, 100).startswith("a" * 100)
    refused = shelf.reader("mallory")(handle, 100)
    assert "another session" in refused and "a" * 10 not in refused
    shelf.forget("alice")
    assert shelf.reader("alice")(handle, 100).startswith("a" * 100)  # the store still has it
