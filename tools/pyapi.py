"""The ``python`` render path: tools as typed Python signatures with docstrings.

Code-mode harnesses show a model its tools as functions it calls from the code it writes. The
text here is a valid Python stub: one keyword-only ``def`` per tool, in the given order, with
JSON Schema types as type hints (optional parameters default to ``None``) and the description
and parameter notes as its docstring. The same tools always give the same bytes, so the code
tool's description holds between boundaries; tools loaded later are announced in the
conversation (:func:`announce_python`) instead of rewriting it.
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Sequence
from typing import Any

from tooltray.tools.spec import ToolSpec

HEADER = "from typing import Any, Literal"
ANNOUNCE_HEAD = "New functions you can call from code:"
_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
_SCALARS |= {"null": "None", "object": "dict[str, Any]"}


def identifier(name: str) -> str:
    """``name`` as a Python identifier (other characters become ``_``; a keyword gets one)."""
    text = re.sub(r"\W", "_", name) or "_"
    text = f"_{text}" if text[0].isdigit() else text
    return f"{text}_" if keyword.iskeyword(text) else text


def hint(schema: Any) -> str:
    """A type hint for a JSON Schema: ``str``, ``list[int]``, ``Literal["a", "b"]``, ``Any``."""
    if not isinstance(schema, dict):
        return "Any"
    values = schema["enum"] if isinstance(schema.get("enum"), list) else None
    if "const" in schema:
        values = [schema["const"]]
    if values:
        shown = [_literal(v) for v in values]
        return f"Literal[{', '.join(shown)}]" if all(shown) else "Any"
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " | ".join(dict.fromkeys(hint(s) for s in schema[key])) or "Any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(dict.fromkeys(hint({**schema, "type": k}) for k in kind)) or "Any"
    if kind == "array":
        return f"list[{hint(schema.get('items'))}]"
    return _SCALARS.get(str(kind), "Any")


def _literal(value: Any) -> str:
    """A JSON scalar as Python source (``None``, ``True``, ``"text"``, ``3``); else empty."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, (str, int, float)):
        return json.dumps(value, ensure_ascii=False)
    return ""


def _parameters(spec: ToolSpec) -> list[str]:
    props = spec.parameters.get("properties") or {}
    required = set(spec.parameters.get("required") or ())
    first = [f"{identifier(n)}: {hint(s)}" for n, s in props.items() if n in required]
    rest = [
        f"{identifier(n)}: {hint(s)} | None = None" for n, s in props.items() if n not in required
    ]
    return first + rest


def _docstring(spec: ToolSpec) -> str:
    lines = (spec.description.strip() or spec.name).replace("\\", "\\\\").splitlines()
    props = spec.parameters.get("properties") or {}
    notes = [
        f"    {identifier(n)}: {' '.join(str(s.get('description')).split())}"
        for n, s in props.items()
        if isinstance(s, dict) and s.get("description")
    ]
    if notes:
        lines += ["", "Args:", *notes]
    body = "\n".join(f"    {line}" if line else "" for line in lines).replace('"""', '\\"\\"\\"')
    end = "\n    " if len(lines) > 1 else ""
    return f'    """{body.lstrip()}{end}"""'


def render_def(spec: ToolSpec) -> str:
    """One tool as a keyword-only stub ``def`` with its docstring."""
    params = _parameters(spec)
    args = f"*, {', '.join(params)}" if params else ""
    return f"def {identifier(spec.name)}({args}) -> Any:\n{_docstring(spec)}\n    ..."


def render_python(tools: Sequence[ToolSpec]) -> str:
    """The stub module for ``tools``: the typing import, then one ``def`` per tool."""
    return "\n\n\n".join([HEADER, *(render_def(t) for t in tools)]) + "\n"


def announce_python(tools: Sequence[ToolSpec]) -> str:
    """The conversation's announcement of tools loaded after the code tool was described."""
    if not tools:
        return ""
    return f"{ANNOUNCE_HEAD}\n```python\n{render_python(tools)}```"
