"""The ``python`` render path: golden bytes, valid Python, and the hints it writes."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from tooltray.tools.pyapi import announce_python, hint, identifier, render_python
from tooltray.tools.spec import ToolSpec

GOLDEN = Path(__file__).parent / "golden" / "render.python.txt"
UPDATE = os.environ.get("TOOLTRAY_UPDATE_GOLDEN") == "1"


def test_golden_bytes(tools: list[ToolSpec]) -> None:
    data = render_python(tools).encode("utf-8")
    if UPDATE:
        GOLDEN.write_bytes(data)
    assert GOLDEN.exists(), f"missing {GOLDEN}; run with TOOLTRAY_UPDATE_GOLDEN=1"
    assert data == GOLDEN.read_bytes()
    assert render_python(list(tools)) == render_python(tools)  # deterministic


def test_the_stubs_are_python_with_one_def_per_tool_and_their_docstrings(
    tools: list[ToolSpec],
) -> None:
    module = ast.parse(render_python(tools))
    defs = [node for node in module.body if isinstance(node, ast.FunctionDef)]
    assert [d.name for d in defs] == [identifier(t.name) for t in tools]
    for node, spec in zip(defs, tools, strict=True):
        doc = ast.get_docstring(node) or ""
        assert doc.startswith((spec.description.strip() or spec.name).splitlines()[0].strip())
        required = set(spec.parameters.get("required") or ())
        defaults = {a.arg for a in node.args.kwonlyargs[len(required) :]}
        assert {a.arg for a in node.args.kwonlyargs} - defaults == {identifier(n) for n in required}


def test_hints_and_names() -> None:
    assert hint({"type": "array", "items": {"type": "integer"}}) == "list[int]"
    assert hint({"enum": ["a", "b", None]}) == 'Literal["a", "b", None]'
    assert hint({"const": True}) == "Literal[True]" and hint({"enum": [{"a": 1}]}) == "Any"
    assert hint({"type": ["string", "null"]}) == "str | None"
    assert hint({"anyOf": [{"type": "number"}, {"type": "object"}]}) == "float | dict[str, Any]"
    assert hint(None) == "Any"
    assert identifier("mcp.server-tool") == "mcp_server_tool"
    assert identifier("class") == "class_" and identifier("1st") == "_1st"


def test_a_description_with_quotes_stays_one_docstring() -> None:
    spec = ToolSpec(name="q", description='Says """hi""" and \\n', parameters={"type": "object"})
    node = ast.parse(render_python([spec])).body[1]
    assert isinstance(node, ast.FunctionDef)
    assert ast.get_docstring(node) == 'Says """hi""" and \\n'
    assert announce_python([]) == ""
    assert announce_python([spec]).endswith("```") and "def q() -> Any:" in announce_python([spec])
