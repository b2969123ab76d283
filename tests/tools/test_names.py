"""Name rules: MCP prefix stripping, did-you-mean candidates, sanitising."""

from __future__ import annotations

import pytest

from tooltray.tools.errors import ToolSpecError
from tooltray.tools.names import did_you_mean, match_key, sanitize_name, strip_prefix
from tooltray.tools.spec import check_name


@pytest.mark.parametrize(
    ("name", "stripped"),
    [
        ("mcp__github__search", "search"),
        ("github__search", "search"),
        ("search", "search"),
        ("__book_meeting_room", "__book_meeting_room"),
        ("tool__", "tool__"),
        ("mcp__srv__a__b", "a__b"),
    ],
)
def test_strip_prefix(name: str, stripped: str) -> None:
    assert strip_prefix(name) == stripped


def test_match_key_strips_every_prefix() -> None:
    assert match_key("mcp__srv__a__b") == "b"
    assert match_key("plain_name") == "plain_name"


def test_did_you_mean_orders_close_then_prefix_then_substring() -> None:
    pool = ["read_file", "write_file", "read_folder", "list_dir", "mcp__fs__stat"]
    assert did_you_mean("read_fil", pool)[0] == "read_file"
    assert did_you_mean("list", pool) == ["list_dir"]
    assert did_you_mean("stat", pool) == ["mcp__fs__stat"]
    assert did_you_mean("zzzz", pool) == []
    assert len(did_you_mean("file", [f"file_{i}" for i in range(20)])) == 5


def test_sanitize_maps_invalid_chars_and_keeps_long_names_distinct() -> None:
    assert sanitize_name("PDF&URLTool") == "PDF_URLTool"
    assert sanitize_name("requestFirst Aid Assistance") == "requestFirst_Aid_Assistance"
    long_a, long_b = "x" * 70 + "a", "x" * 70 + "b"
    assert len(sanitize_name(long_a)) == 64
    assert sanitize_name(long_a) != sanitize_name(long_b)
    assert check_name(sanitize_name(long_a)) == sanitize_name(long_a)
    assert sanitize_name(long_a) == sanitize_name(long_a)


def test_sanitize_rejects_empty() -> None:
    with pytest.raises(ToolSpecError, match="empty"):
        sanitize_name("  ")
