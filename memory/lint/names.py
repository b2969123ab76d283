"""Names strict loading refuses: invalid for providers, or clashing once an mcp__ prefix goes.

:func:`tooltray.tools.spec.check_name` and the registry raise on these; lint lists them as
errors next to every other finding, keeps the first of two clashing tools and maps invalid names
onto the rule (as ``--sanitize`` would) so the other checks still run.
"""

from __future__ import annotations

from collections.abc import Sequence

from tooltray.memory.retrieval.twins import distinct
from tooltray.tools.errors import ToolSpecError, shown
from tooltray.tools.finding import Finding
from tooltray.tools.names import clash_key, sanitize_name
from tooltray.tools.spec import MAX_BUNDLE, ToolSpec, check_bundle, check_name

KIND = "name"


def checked_name(raw: str, what: str, found: list[Finding]) -> str:
    """``raw`` if providers accept it; else its sanitised form, with an error in ``found``."""
    try:
        return check_name(raw, what)
    except ToolSpecError:
        pass
    try:
        fixed = sanitize_name(raw)
    except ToolSpecError:
        fixed = "_"
    found.append(
        Finding(
            KIND,
            "error",
            (fixed,),
            f"{what} name {shown(raw)} breaks the provider rule (1-64 of [a-zA-Z0-9_.-])",
            f"rename it, e.g. to {fixed!r} (what --sanitize maps it to)",
        )
    )
    return fixed


def checked_bundle(raw: str, found: list[Finding]) -> str:
    """``raw`` as written when it is one line of text; else collapsed onto one, with an error."""
    try:
        return check_bundle(raw)
    except ToolSpecError as exc:
        fixed = " ".join(raw.split())[:MAX_BUNDLE] or "_"
        found.append(Finding(KIND, "error", (fixed,), str(exc), f"rename it, e.g. to {fixed!r}"))
        return fixed


def clash(name: str, first: str) -> Finding:
    """The error for ``name`` clashing with the earlier ``first``."""
    same = "the same name" if name == first else "the same name once an mcp__ prefix goes"
    return Finding(
        KIND,
        "error",
        (name, first),
        f"{shown(name)} and {shown(first)} have {same}; the registry refuses the second",
        "rename one of them (or give one server's tools a prefix)",
    )


def dedupe(tools: Sequence[ToolSpec]) -> tuple[list[ToolSpec], list[Finding]]:
    """The tools without later clashes (same name or prefix-stripped key), and the errors."""
    kept = distinct(tools)
    owners = {clash_key(spec.name): spec.name for spec in kept}
    kept_ids = {id(spec) for spec in kept}
    dropped = [spec for spec in tools if id(spec) not in kept_ids]
    return kept, [clash(spec.name, owners[clash_key(spec.name)]) for spec in dropped]
