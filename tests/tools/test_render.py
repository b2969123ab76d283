"""Renderers: golden bytes on every path, determinism, the compact text line format."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tooltray.tools.errors import ConfigError
from tooltray.tools.render import (
    RENDER_PATHS,
    canonical_json,
    render,
    render_anthropic,
    render_line,
    render_openai_chat,
    render_openai_responses,
    render_text,
    type_label,
)
from tooltray.tools.spec import ToolSpec

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("TOOLTRAY_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("path", RENDER_PATHS)
def test_golden_bytes(path: str, tools: list[ToolSpec]) -> None:
    golden = GOLDEN / f"render.{path}.{'txt' if path == 'text' else 'json'}"
    data = render(path, tools).encode("utf-8")
    if UPDATE:
        golden.write_bytes(data)
    assert golden.exists(), f"missing {golden}; run with TOOLTRAY_UPDATE_GOLDEN=1"
    assert data == golden.read_bytes()


def test_text_golden_is_what_a_human_expects(tools: list[ToolSpec]) -> None:
    lines = render_text(tools).split("\n")
    assert (
        lines[0]
        == "read_file(path: str, max_bytes?: int) — Read a text file and return its contents."
    )
    assert lines[1] == (
        'write_file(path: str, content: str, mode?: "overwrite"|"append") — '
        "Write text to a file, replacing it if it exists."
    )
    assert lines[3].startswith(
        'get_weather(city: str, units?: "metric"|"imperial"|null, days?: list[int])'
    )
    assert lines[4].startswith("weather_alerts(region: str|dict) — Active storm")
    assert lines[5] == "now() — The current date and time in UTC."


def test_json_paths_match_the_list_renderers(tools: list[ToolSpec]) -> None:
    assert json.loads(render("openai", tools)) == render_openai_chat(tools)
    assert json.loads(render("responses", tools)) == render_openai_responses(tools)
    assert json.loads(render("anthropic", tools)) == render_anthropic(tools)
    first = render_openai_chat(tools)[0]
    assert first["type"] == "function" and set(first["function"]) == {
        "name",
        "description",
        "parameters",
    }
    assert render_openai_responses(tools)[0]["strict"] is False
    assert set(render_anthropic(tools)[0]) == {"name", "description", "input_schema"}


def test_same_input_same_bytes_and_order_matters(tools: list[ToolSpec]) -> None:
    for path in RENDER_PATHS:
        rebuilt = [ToolSpec.model_validate_json(t.model_dump_json()) for t in tools]
        assert render(path, tools) == render(path, rebuilt)
        assert render(path, tools) != render(path, list(reversed(tools)))


def test_renderers_return_copies(tools: list[ToolSpec]) -> None:
    out = render_anthropic(tools)
    out[0]["input_schema"]["properties"].clear()
    assert tools[0].parameters["properties"]


def test_canonical_json_is_sorted_compact_utf8() -> None:
    assert (
        canonical_json({"b": 1, "a": ["é", {"d": None, "c": 2}]})
        == '{"a":["é",{"c":2,"d":null}],"b":1}'
    )


@pytest.mark.parametrize(
    ("schema", "label"),
    [
        ({"type": "string"}, "str"),
        ({"type": "number"}, "float"),
        ({"type": "array"}, "list"),
        (
            {"type": "array", "items": {"type": "array", "items": {"type": "boolean"}}},
            "list[list[bool]]",
        ),
        ({"type": ["integer", "null"]}, "int|null"),
        ({"enum": list("abcdef")}, "any"),
        ({"type": "string", "enum": list("abcdef")}, "str"),
        ({"const": 3}, "3"),
        ({"oneOf": [{"type": "string"}, {"type": "string"}]}, "str"),
        ({"$ref": "#/$defs/Node"}, "Node"),
        ({}, "any"),
        (True, "any"),
    ],
)
def test_type_labels(schema: object, label: str) -> None:
    assert type_label(schema) == label


def test_line_without_description_and_long_first_sentence() -> None:
    with pytest.warns(UserWarning):
        bare = ToolSpec(name="bare")
    assert render_line(bare) == "bare()"
    wordy = ToolSpec(name="w", description="x" * 300 + ". Second.")
    assert render_line(wordy).endswith("…") and len(render_line(wordy)) < 200


def test_unknown_path() -> None:
    with pytest.raises(ConfigError, match="text, openai, responses, anthropic"):
        render("gemini", [])
