"""Property test: any valid ToolSpec survives a JSON round trip and renders byte-identically."""

from __future__ import annotations

import warnings
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tooltray.tools.render import RENDER_PATHS, render
from tooltray.tools.spec import ToolSpec

names = st.from_regex(r"[a-zA-Z0-9_.-]{1,64}", fullmatch=True)
scalars = st.sampled_from(["string", "integer", "number", "boolean", "null"])
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=80)


def leaf() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": scalars},
        optional={"description": text, "enum": st.lists(st.integers(), max_size=3)},
    )


def node(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.fixed_dictionaries({"type": st.just("array"), "items": children}),
        st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.dictionaries(names, children, max_size=3)}
        ),
        st.fixed_dictionaries({"anyOf": st.lists(children, min_size=1, max_size=3)}),
    )


schemas = st.recursive(leaf(), node, max_leaves=8)


@st.composite
def parameters(draw: st.DrawFn) -> dict[str, Any]:
    props = draw(st.dictionaries(names, schemas, max_size=5))
    required = draw(st.lists(st.sampled_from(sorted(props)), unique=True)) if props else []
    return {"type": "object", "properties": props, "required": required}


specs = st.builds(
    ToolSpec,
    name=names,
    description=text,
    parameters=parameters(),
    bundle=st.none() | names,
    tags=st.lists(st.text(max_size=10), max_size=3).map(tuple),
    priority=st.integers(-5, 5),
    pinned=st.booleans(),
    source=st.sampled_from(["catalog", "callable", "openai", "mcp:fs"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_json_round_trip(data: st.DataObject) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        spec = data.draw(specs)
        again = ToolSpec.model_validate_json(spec.model_dump_json())
    assert again == spec
    assert again.content_hash == spec.content_hash
    for path in RENDER_PATHS:
        assert render(path, [again]) == render(path, [spec])
