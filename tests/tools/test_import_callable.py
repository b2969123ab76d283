"""from_callable: schema from hints via pydantic, text from the Google-style docstring."""

from __future__ import annotations

import socket
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from tooltray.tools.errors import ToolSpecError
from tooltray.tools.importers.callable import from_callable
from tooltray.tools.importers.docstrings import parse_docstring


class Point(BaseModel):
    """A point on the map."""

    x: float
    y: float = 0.0


class Node(BaseModel):
    value: int
    children: list[Node] = []


def search(
    query: str,
    limit: int = 10,
    mode: Literal["fast", "deep"] = "fast",
    near: Point | None = None,
    n: Annotated[int, Field(ge=0, description="How many.")] = 1,
    title: str = "",
) -> list[str]:
    """Search the index for matching pages.

    Results are ranked by BM25.

    Args:
        query: what to look for,
            in plain words.
        limit (int): the most results to return.
        title: restrict to pages with this title.

    Returns:
        Page ids.
    """
    return []


def test_schema_and_descriptions() -> None:
    spec = from_callable(search, bundle="web")
    assert spec.name == "search" and spec.bundle == "web" and spec.source == "callable"
    assert spec.description == "Search the index for matching pages.\n\nResults are ranked by BM25."
    props = spec.parameters["properties"]
    assert list(props) == ["query", "limit", "mode", "near", "n", "title"]
    assert props["query"] == {"type": "string", "description": "what to look for, in plain words."}
    assert props["limit"]["default"] == 10 and props["limit"]["type"] == "integer"
    assert props["mode"]["enum"] == ["fast", "deep"]
    assert props["n"] == {"default": 1, "description": "How many.", "minimum": 0, "type": "integer"}
    assert props["title"]["description"] == "restrict to pages with this title."
    assert spec.parameters["required"] == ["query"]
    point = props["near"]["anyOf"][0]
    assert point["properties"]["x"] == {"type": "number"}  # $ref inlined, titles dropped
    assert "$defs" not in spec.parameters and "title" not in point


def test_recursive_models_keep_defs() -> None:
    def walk(root: Node) -> None:
        """Walk a tree."""

    spec = from_callable(walk)
    assert spec.parameters["properties"]["root"] == {"$ref": "#/$defs/Node"}
    assert "Node" in spec.parameters["$defs"]


def test_overrides_and_empty_description_warning() -> None:
    def ping() -> str:
        return "pong"

    with pytest.warns(UserWarning, match="empty description"):
        spec = from_callable(ping)
    assert spec.parameters == {"type": "object", "properties": {}}
    spec = from_callable(ping, name="ping.v2", description="Check liveness.", pinned=True)
    assert (spec.name, spec.description, spec.pinned) == ("ping.v2", "Check liveness.", True)


def _variadic(*items: int) -> None:
    """Bad."""


def _kwargs(**opts: str) -> None:
    """Bad."""


def _untyped(x) -> None:  # type: ignore[no-untyped-def]
    """Bad."""


def _unresolvable(conn: NotDefinedAnywhere) -> None:  # type: ignore[name-defined]  # noqa: F821
    """Bad."""


def _documents_ghost(x: int) -> None:
    """Bad.

    Args:
        y: not a parameter.
    """


def _positional(x: int, /) -> None:
    """Bad."""


@pytest.mark.parametrize(
    ("fn", "fragment"),
    [
        (_variadic, "'items' is variadic positional"),
        (_kwargs, "'opts' is variadic keyword"),
        (_untyped, "'x' has no type hint"),
        (_documents_ghost, "unknown parameter(s) ['y']"),
        (_positional, "'x' is positional-only"),
        (lambda: None, "Pass name="),
        (42, "needs a callable"),
    ],
)
def test_bad_callables(fn: Any, fragment: str) -> None:
    with pytest.raises(ToolSpecError) as err:
        from_callable(fn)
    assert fragment in str(err.value)


def test_type_without_schema_names_the_parameter() -> None:
    def connect(sock: socket.socket) -> None:
        """Use a socket."""

    with pytest.raises(ToolSpecError, match="parameter 'sock' has type"):
        from_callable(connect)


def test_unresolvable_hint() -> None:
    with pytest.raises(ToolSpecError, match="cannot read its signature"):
        from_callable(_unresolvable)


def test_docstring_parser_sections() -> None:
    doc = parse_docstring(
        """Summary line.

        Args:
            a: first.
            b (int, optional): second
                continues.

        Raises:
            ValueError: never.
        """
    )
    assert doc.summary == "Summary line."
    assert doc.args == {"a": "first.", "b": "second continues."}
    assert parse_docstring(None).summary == ""
