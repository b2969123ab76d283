"""Bundles inferred for catalogs that have none (OpenAI, Anthropic and MCP tools arrays)."""

from __future__ import annotations

import json
from pathlib import Path

from tooltray.tools import ToolRegistry
from tooltray.tools.grouping import grouped, infer_groups, words
from tooltray.tools.importers.catalog import read_catalog
from tooltray.tools.spec import ToolSpec


def test_names_group_by_their_rarest_shared_content_word() -> None:
    names = ["create_calendar_event", "list_calendar_events", "delete_calendar_event"]
    names += ["send_email", "search_email", "get_weather", "order_pizza"]
    groups = infer_groups(names)
    assert {groups[n] for n in names[:3]} == {"calendar"}
    assert groups["send_email"] == groups["search_email"] == "email"
    assert "get_weather" not in groups and "order_pizza" not in groups


def test_verbs_never_name_a_bundle() -> None:
    groups = infer_groups(["get_a", "get_b", "set_c", "set_d"])
    assert groups == {}
    assert words("getUserStatus_v2") == ["user", "status"]


def test_server_prefixes_group_by_server() -> None:
    groups = infer_groups(["alpha__search", "alpha__fetch", "beta__search", "beta__read"])
    assert groups == {
        "alpha__search": "alpha",
        "alpha__fetch": "alpha",
        "beta__search": "beta",
        "beta__read": "beta",
    }


def test_a_catalog_with_bundles_is_left_as_it_is() -> None:
    specs = [ToolSpec(name="send_email", bundle="mail"), ToolSpec(name="search_email")]
    assert grouped(specs) == specs


def test_an_openai_tools_array_gets_bundles_and_says_they_were_inferred(tmp_path: Path) -> None:
    names = ["send_email", "search_email", "play_music", "pause_music", "get_weather"]
    items = [
        {"type": "function", "function": {"name": n, "description": n.replace("_", " ")}}
        for n in names
    ]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    catalog = read_catalog(path)
    assert catalog.inferred
    bundles = {t.name: t.bundle for t in catalog.tools}
    assert bundles["send_email"] == bundles["search_email"] == "email"
    assert bundles["get_weather"] is None
    registry = ToolRegistry.from_catalog(path)
    assert {b.name for b in registry.bundles()} >= {"email", "music"}


def test_an_mcp_tools_list_result_gets_bundles(tmp_path: Path) -> None:
    tools = [
        {"name": n, "description": "d", "inputSchema": {"type": "object"}}
        for n in ("read_file", "write_file", "list_directory", "create_directory")
    ]
    path = tmp_path / "list.json"
    path.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    catalog = read_catalog(path)
    assert {t.bundle for t in catalog.tools} == {"file", "directory"}
