"""Suite ``menu_budget``: the fixed part every call pays, as catalogs grow (issue 35).

``python bench/run.py menu_budget [--data DIR] [--mcp DIR]``. For each dev corpus, each real-MCP
catalog and one three times mcp300 (its real servers and two renamed copies of each:
``<server>-2``, ``<server>-3``), the bundle menu's o200k tokens and the fixed part
(``AllowedCatalog._fixed``: the menu plus the meta-tools the view leads with) on the openai and text
paths, with the whole menu (``before``: no budget) and the budgeted one (``after``:
``MENU_BUDGET``), how many servers the budgeted menu names, and whether it is the whole menu
byte for byte. No store, no embedding: token counts only.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import load_registry  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from tooltray.memory.config import Settings  # noqa: E402
from tooltray.memory.core.catalog import AllowedCatalog  # noqa: E402
from tooltray.memory.core.menu import bundle_menu, listed  # noqa: E402
from tooltray.tools.registry import ToolRegistry  # noqa: E402
from tooltray.tools.render import count_tokens  # noqa: E402
from tooltray.tools.spec import ToolSpec  # noqa: E402

DEV = ("apibank", "bfcl_multiturn", "bfcl_small")
MCP = ("mcp20", "mcp70", "mcp300")
PATHS = ("openai", "text")
MCP_DATA = Path(__file__).resolve().parent / "data" / "mcp" / "corpus"
NO_BUDGET = 10**9


def copies(registry: ToolRegistry, n: int) -> ToolRegistry:
    """``registry`` with ``n - 1`` renamed copies of every bundle (servers ``<b>-2`` ...)."""
    specs = list(registry.allowed())
    out = list(specs)
    for k in range(2, n + 1):
        out += [_copy(s, k) for s in specs]
    return ToolRegistry(out)


def _copy(spec: ToolSpec, k: int) -> ToolSpec:
    bundle = f"{spec.bundle}-{k}" if spec.bundle else None
    return spec.model_copy(update={"name": f"{spec.name}_{k}", "bundle": bundle})


def fixed(registry: ToolRegistry, path: str) -> dict[str, int]:
    """Menu and fixed-part tokens on ``path``, before (no budget) and after (the budget)."""
    planner = AllowedCatalog(registry, Settings(db="sqlite://", path=path))
    out: dict[str, int] = {"servers": len(registry.bundles()), "tools": len(registry.allowed())}
    menus = [bundle_menu(registry.bundles(), budget=b) for b in (NO_BUDGET, None)]
    for label, menu in zip(("before", "after"), menus, strict=True):
        out[f"menu_{label}"] = count_tokens(menu).n if menu else 0
        out[f"fixed_{label}"] = planner._fixed(menu)
    out["listed"] = len(listed(menus[1]))
    out["same"] = int(menus[0] == menus[1])
    return out


def catalogs(data: Path, mcp: Path) -> dict[str, ToolRegistry]:
    """Every catalog measured, by name."""
    out = {c: load_registry(data, c)[0] for c in DEV if (data / c).is_dir() or c == "bfcl_small"}
    out |= {c: load_registry(mcp, c)[0] for c in MCP}
    big = copies(out["mcp300"], 3)
    out[f"mcp300 x3 ({len(big.bundles())} servers)"] = big
    return out


def run(data_dir: Path, out_dir: Path, quick: bool = False) -> dict[str, Any]:
    """The menu and fixed part of every catalog on both paths."""
    rows = {
        f"{name} {path}": fixed(reg, path)
        for name, reg in catalogs(data_dir, MCP_DATA).items()
        for path in PATHS
    }
    Console().print(_table(rows))
    return {"rows": rows}


def _table(rows: dict[str, dict[str, int]]) -> Table:
    table = Table(title="fixed part per call (o200k), before -> after the menu budget")
    for col in ("catalog, path", "servers", "tools", "menu", "fixed", "listed", "same menu"):
        table.add_column(col)
    for name, r in rows.items():
        menu = f"{r['menu_before']:,} -> {r['menu_after']:,}"
        fix = f"{r['fixed_before']:,} -> {r['fixed_after']:,}"
        cells = (str(r["servers"]), f"{r['tools']:,}", menu, fix, str(r["listed"]))
        table.add_row(name, *cells, "yes" if r["same"] else "no")
    return table
