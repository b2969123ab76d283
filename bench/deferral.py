"""Suite ``deferral``: provider-native deferral against tooltray's own meta-tools, in tokens.

``python bench/run.py deferral [--data DIR] [--out DIR] [--quick]``

Per catalog (the demo catalog with its script's user messages; bfcl_multiturn with the first
message of every dev conversation) and path (anthropic, responses), each query starts a real
trinket session and is measured (o200k tokens, ``tools/render.py``) three ways:

- ``tooltray``: what the model sees with tooltray's meta-tools: the ``tools=`` JSON (meta-tools
  first, then the selection) plus the bundle menu in the system prefix.
- ``native_visible``: what it sees with native deferral: the selection and ``read_result`` in
  full, plus the search tool (and on ``responses`` each namespace's name and description, an
  approximation of what the API shows of a deferred namespace). Deferred schemas are left out:
  the providers keep them out of context until a search references them.
- ``native_sent``: everything the request carries with native deferral (deferred schemas too).

A later load costs the same schemas either way (appended to ``tools=``, or expanded where the
search answer sits); what differs is that a native load leaves ``tools=`` unchanged.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cost import bfcl_catalog, bfcl_first_queries, demo_queries, demo_specs, registry_of  # noqa: E402

from tooltray.memory.adapters.native_search import NativeDeferral  # noqa: E402
from tooltray.memory.config import Settings  # noqa: E402
from tooltray.memory.core.trinket import ToolLoaderTrinket  # noqa: E402
from tooltray.memory.store import Store  # noqa: E402
from tooltray.tools.registry import ToolRegistry  # noqa: E402
from tooltray.tools.render import canonical_json, count_tokens  # noqa: E402

PATHS = ("anthropic", "responses")
SETTINGS: dict[str, Any] = {"context_window": 8192, "instructions": ""}


def tokens(obj: Any) -> int:
    """o200k tokens of ``obj`` as canonical JSON (a string is counted as it is)."""
    return count_tokens(obj if isinstance(obj, str) else canonical_json(obj)).n


def visible(tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The part of a native-deferral ``tools=`` list the model sees before any search."""
    out = []
    for tool in tools:
        if tool.get("defer_loading"):
            continue
        if tool.get("type") == "namespace":
            tool = {k: v for k, v in tool.items() if k != "tools"}
        out.append(tool)
    return out


def measure(registry: ToolRegistry, path: str, queries: Sequence[str], db: Path) -> dict[str, Any]:
    """Mean tokens per first request over ``queries`` on one catalog and path."""
    url = f"sqlite:///{db}"
    trinket = ToolLoaderTrinket(
        registry, Store(url), settings=Settings(db=url, path=path, **SETTINGS)
    )
    rows: list[tuple[int, int, int]] = []
    try:
        run = uuid.uuid4().hex[:8]
        for i, query in enumerate(queries):
            native = NativeDeferral(trinket, f"deferral-{run}-{path}-{i}", path)
            sent = native.start([query])
            view = trinket.prepare(native.session_id, [{"role": "user", "content": query}])
            ours = view.tool_tokens + count_tokens(view.system_prefix).n
            rows.append((ours, tokens(visible(sent)), tokens(sent)))
    finally:
        trinket.close()
    ours, seen, sent = (statistics.fmean(col) for col in zip(*rows, strict=True))
    return {
        "queries": len(rows),
        "tooltray": round(ours, 1),
        "native_visible": round(seen, 1),
        "native_sent": round(sent, 1),
        "saved": round(ours - seen, 1),
        "saved_share": round((ours - seen) / ours, 4),
    }


def run(data: Path, out: Path, quick: bool = False) -> dict[str, Any]:
    """Both catalogs, both paths; prints one line per pair."""
    catalogs = {
        "demo": (registry_of(*demo_specs()), demo_queries()),
        "bfcl_multiturn": (bfcl_catalog(data), bfcl_first_queries(data)[: 20 if quick else None]),
    }
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (registry, queries) in catalogs.items():
            result[name] = {"eager": {p: tokens(_eager(registry, p)) for p in PATHS}}
            for path in PATHS:
                row = measure(registry, path, queries, Path(tmp) / f"{name}-{path}.db")
                result[name][path] = row
                print(name, path, row)
    return result


def _eager(registry: ToolRegistry, path: str) -> list[dict[str, Any]]:
    from tooltray.memory.core.prompt import render_native

    return render_native(path, registry.allowed())


if __name__ == "__main__":
    run(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[1] / "shared" / "data", HERE)
