"""Meta-tool argument parsing: every reasonable shape accepted, garbage refused with a fix."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooltray.memory.metatools.meta_tools import (
    META_TOOL_NAMES,
    meta_tool_specs,
    parse_load,
    parse_read_result,
    parse_unload,
)
from tooltray.tools.errors import MetaToolArgumentError, TooltrayError


def test_specs_are_valid_and_ordered() -> None:
    assert tuple(s.name for s in meta_tool_specs()) == META_TOOL_NAMES
    assert [s.name for s in meta_tool_specs(with_read_result=False)] == list(META_TOOL_NAMES[:3])


@pytest.mark.parametrize(
    ("arguments", "names", "query"),
    [
        ({"tools": ["a", "b"]}, ("a", "b"), None),
        ({"tools": "a, b ,a"}, ("a", "b"), None),
        ('{"tools": ["calendar"]}', ("calendar",), None),
        ("calendar", ("calendar",), None),
        ("calendar, weather_forecast", ("calendar", "weather_forecast"), None),
        ({"query": " book a flight "}, (), "book a flight"),
        ({"names": ["x"], "query": "y"}, ("x",), "y"),
        ("*", ("*",), None),  # every tool: the fallback, written as the description says
        ({"tools": ["*"]}, ("*",), None),
    ],
)
def test_load_accepts_reasonable_shapes(arguments: Any, names: tuple[str, ...], query: Any) -> None:
    req = parse_load(arguments)
    assert req.names == names
    assert req.query == query


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({}, "needs `tools`"),
        (None, "needs `tools`"),
        (42, "JSON object"),
        ({"tools": [1, 2]}, "string name"),
        ({"tools": {"a": 1}}, "list of names"),
        ({"query": 3}, "must be a string"),
        ({"tools": ["x" * 500]}, "too long"),
        ({"tools": [f"t{i}" for i in range(100)]}, "at most"),
        ("not json", r"not JSON \(got 'not json'\); send a JSON object like \{\"tools\""),
        ('{"tools": ["a"]', "not JSON"),
    ],
)
def test_load_refuses_garbage_with_a_fix(arguments: Any, fragment: str) -> None:
    with pytest.raises(MetaToolArgumentError, match=fragment):
        parse_load(arguments)


def test_not_json_shows_each_meta_tools_expected_shape() -> None:
    with pytest.raises(MetaToolArgumentError, match=r'\{"tools": \["name"\]\}'):
        parse_unload("drop everything please")
    with pytest.raises(MetaToolArgumentError, match=r'\{"handle": "r-\.\.\."'):
        parse_read_result("the handle r-1")


def test_unload_and_read_result() -> None:
    assert parse_unload({"tools": ["a"]}) == ("a",)
    with pytest.raises(MetaToolArgumentError, match="unload_tools needs"):
        parse_unload({"tools": []})
    assert parse_read_result({"handle": "r-1", "offset": "30"}) == ("r-1", 30)
    assert parse_read_result({"handle": "r-1", "offset": -5}) == ("r-1", 0)
    with pytest.raises(MetaToolArgumentError, match="handle"):
        parse_read_result({"offset": 3})
    with pytest.raises(MetaToolArgumentError, match="whole number"):
        parse_read_result({"handle": "r", "offset": "soon"})


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=80),
        lambda kids: (
            st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=8), kids, max_size=5)
        ),
        max_leaves=20,
    )
)
def test_any_json_either_parses_or_raises_a_tooltray_error(arguments: Any) -> None:
    for parse in (parse_load, parse_unload, parse_read_result):
        try:
            parse(arguments)
        except TooltrayError as exc:
            assert str(exc)
