"""Imports point one way and never in a circle, read with ``ast`` from the installed layout.

Layers, top to bottom: the clients (agent, adapters, cli, eval, gateway, lint, report) -> the
core (``memory/core``) -> what serves it (metatools, retrieval, embedders, learning) -> the store
-> ``tools`` and ``events``. An import inside a function or under ``TYPE_CHECKING`` counts as much
as one at the top: a lazy import does not make a circle go away, and a type-only one still ties
the two modules together.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPS = ("tools", "memory", "events")
CLIENTS = ("agent", "adapters", "cli", "eval", "gateway", "lint", "report")
SERVING = ("metatools", "retrieval", "embedders", "learning")


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return "tooltray." + ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for top in TOPS for p in (ROOT / top).rglob("*.py")}


def _absolute(node: ast.ImportFrom, module: str, path: Path) -> str:
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, path: Path) -> set[str]:
    """The library modules ``module`` imports, wherever the import stands."""
    out: set[str] = set()
    todo: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    while todo:
        for node in ast.iter_child_nodes(todo.pop()):
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, module, path)
                out.update(
                    f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                    for a in node.names
                )
            todo.append(node)
    return {m for m in out if m in MODULES and m != module}


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _under(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _upward(lower: tuple[str, ...], upper: tuple[str, ...]) -> list[tuple[str, str]]:
    return sorted(
        (m, i) for m, deps in GRAPH.items() if _under(m, *lower) for i in deps if _under(i, *upper)
    )


def _memory(*names: str) -> tuple[str, ...]:
    return tuple(f"tooltray.memory.{n}" for n in names)


def test_the_layers_import_downward_only() -> None:
    rules = {
        "core -> a client": (_memory("core"), _memory(*CLIENTS)),
        "serving -> core or a client": (_memory(*SERVING), _memory("core", *CLIENTS)),
        "store -> anything above it": (_memory("store"), _memory("core", *SERVING, *CLIENTS)),
        "tools/events -> memory": (("tooltray.tools", "tooltray.events"), ("tooltray.memory",)),
    }
    wrong = {rule: _upward(low, up) for rule, (low, up) in rules.items()}
    assert not any(wrong.values()), f"move the shared part down a layer: {wrong}"


def _circles() -> list[list[str]]:
    """The import graph's strongly connected parts of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = [stack.pop()]
            while part[-1] != v:
                part.append(stack.pop())
            if len(part) > 1:
                out.append(sorted(part))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read() -> None:
    """The guard reads real imports: the trinket imports the planner, the planner the selector."""
    assert "tooltray.memory.core.catalog" in GRAPH["tooltray.memory.core.trinket"]
    assert "tooltray.memory.retrieval.selector" in GRAPH["tooltray.memory.core.catalog"]


def test_no_import_circle() -> None:
    """No circle anywhere, the store included (it had three: engine<->url, probe<->probe_server,
    sql<->sql_pg, the last now the CLI's console)."""
    circles = _circles()
    assert not circles, f"break these import circles: {circles}"


PURE = ("tooltray.memory.core.policy", "tooltray.memory.core.decision")
"""The turn's rules: they see values (a snapshot, scores, the catalog's answer) and return one."""
UNSEEN = (
    "tooltray.memory.store",
    "tooltray.memory.core.session",
    "tooltray.memory.core.trinket",
    "tooltray.memory.core.catalog",
    "tooltray.events",
)
"""What the rules must not reach, even through another module: a store, the journal, the
trinket, the catalog's selector, a signal. ``store.records`` (the values crossing the store
boundary, no I/O) is what a snapshot and a change set are made of."""


def _reached(module: str) -> set[str]:
    seen: set[str] = set()
    todo = [module]
    while todo:
        for dep in GRAPH[todo.pop()] - seen:
            seen.add(dep)
            todo.append(dep)
    return seen


def test_the_policy_sees_no_store_journal_signal_or_trinket() -> None:
    wrong = {
        m: sorted(
            i for i in _reached(m) if _under(i, *UNSEEN) and i != "tooltray.memory.store.records"
        )
        for m in PURE
    }
    assert all(m in GRAPH for m in PURE), "a pure module moved: update PURE"
    assert not any(wrong.values()), f"the policy must take values, not reach these: {wrong}"
