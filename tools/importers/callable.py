"""Describe a Python callable as a :class:`ToolSpec`: schema from type hints, text from docstring.

The JSON Schema comes from pydantic (so ``Literal``, ``Optional``, ``list[int]``, models and
``Annotated[..., Field(...)]`` all work); titles are dropped and ``$ref`` definitions inlined when
not recursive, because every schema byte is a prompt token.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pydantic import Field, create_model
from pydantic.errors import PydanticUserError

from tooltray.tools.errors import ToolSpecError
from tooltray.tools.importers.build import make_spec
from tooltray.tools.importers.docstrings import parse_docstring
from tooltray.tools.spec import ToolSpec, check_name

_DATA_KEYS = frozenset({"default", "enum", "const", "examples"})
_MAP_KEYS = frozenset({"properties", "$defs", "definitions", "patternProperties"})


class _Recursive(Exception):
    pass


def _strip_titles(node: Any) -> Any:
    if isinstance(node, list):
        return [_strip_titles(x) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _MAP_KEYS and isinstance(value, dict):
            out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
        else:
            out[key] = value if key in _DATA_KEYS else _strip_titles(value)
    return out


def _inline(node: Any, defs: dict[str, Any], seen: frozenset[str]) -> Any:
    if isinstance(node, list):
        return [_inline(x, defs, seen) for x in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref[len("#/$defs/") :]
        if name in seen:
            raise _Recursive(name)
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return {**_inline(defs[name], defs, seen | {name}), **rest}
    return {k: v if k in _DATA_KEYS else _inline(v, defs, seen) for k, v in node.items()}


def _tidy(schema: dict[str, Any]) -> dict[str, Any]:
    schema = _strip_titles(schema)
    defs = schema.pop("$defs", None)
    if not defs:
        return schema
    try:
        return dict(_inline(schema, defs, frozenset()))
    except _Recursive:
        return {**schema, "$defs": defs}


def _fields(fn: Callable[..., Any], where: str, docs: dict[str, str]) -> dict[str, Any]:
    try:
        params = inspect.signature(fn, eval_str=True).parameters.values()
    except (NameError, TypeError, ValueError) as exc:
        raise ToolSpecError(f"{where}: cannot read its signature ({exc}); fix the hints.") from exc
    fields: dict[str, Any] = {}
    for i, p in enumerate(params):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            raise ToolSpecError(
                f"{where}: parameter {p.name!r} is {p.kind.description}; a tool is called with "
                "named JSON arguments, so use ordinary named parameters (e.g. a list[str])."
            )
        if p.annotation is inspect.Parameter.empty:
            raise ToolSpecError(
                f"{where}: parameter {p.name!r} has no type hint; annotate it (e.g. "
                f"{p.name}: str) so tooltray can write its JSON Schema."
            )
        default = ... if p.default is inspect.Parameter.empty else p.default
        if p.name in docs:
            info = Field(default, alias=p.name, description=docs[p.name])
        else:
            info = Field(default, alias=p.name)
        fields[f"f{i}"] = (p.annotation, info)
    unknown = sorted(set(docs) - {f[1].alias for f in fields.values()})
    if unknown:
        raise ToolSpecError(f"{where}: docstring Args: documents unknown parameter(s) {unknown}.")
    return fields


def _schema(where: str, fields: dict[str, Any]) -> dict[str, Any]:
    try:
        model = create_model("Arguments", **fields)
        schema: dict[str, Any] = model.model_json_schema(by_alias=True)
        return schema
    except (PydanticUserError, TypeError, ValueError) as exc:
        for _, (hint, info) in fields.items():
            try:
                create_model("One", x=(hint, ...)).model_json_schema()
            except (PydanticUserError, TypeError, ValueError):
                raise ToolSpecError(
                    f"{where}: parameter {info.alias!r} has type {hint!r}, which has no JSON "
                    "Schema; use JSON-friendly types (str, int, float, bool, list, dict, "
                    "Literal, pydantic models)."
                ) from exc
        raise ToolSpecError(f"{where}: cannot build a JSON Schema ({exc}).") from exc


def from_callable(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    bundle: str | None = None,
    tags: tuple[str, ...] = (),
    priority: int = 0,
    pinned: bool = False,
) -> ToolSpec:
    """Describe ``fn`` as a tool; it is later called as ``fn(**arguments)``.

    Args:
        fn: a function or callable object whose parameters all carry type hints.
        name: the tool name (default ``fn.__name__``).
        description: overrides the docstring summary.
        bundle: the bundle the tool joins.
        tags: retrieval tie-break labels.
        priority: higher wins ties.
        pinned: always loaded.

    Raises:
        ToolSpecError: ``*args``/``**kwargs``, missing hints, types without a JSON Schema, an
            invalid name, or a docstring documenting parameters that do not exist.
    """
    if not callable(fn):
        raise ToolSpecError(f"from_callable needs a callable, got {type(fn).__name__}.")
    tool = name if name is not None else getattr(fn, "__name__", type(fn).__name__)
    where = f"Tool {tool!r} (from {getattr(fn, '__qualname__', tool)})"
    try:
        check_name(tool)
    except ToolSpecError as exc:
        raise ToolSpecError(f"{exc} Pass name='...' to from_callable.") from None
    doc = parse_docstring(inspect.getdoc(fn))
    schema = _tidy(_schema(where, _fields(fn, where, doc.args)))
    return make_spec(
        where,
        name=tool,
        description=doc.summary if description is None else description,
        parameters=schema,
        bundle=bundle,
        tags=tuple(tags),
        priority=priority,
        pinned=pinned,
        source="callable",
    )
