"""Suite ``cost``: what the tool part of the prompt costs, eager versus tooltray, and its slope.

``python bench/run.py cost [--data DIR] [--out DIR] [--quick]`` (or ``python bench/cost.py``).

1. Per catalog (the demo catalog, bfcl_multiturn) and render path (text, openai, responses,
   anthropic): tokens (o200k) of the tool part when every tool is exposed (eager), against what
   the real trinket's first turn exposes (meta-tools and bundle menu included), averaged over
   first-turn queries (the demo script's user messages; every bfcl_multiturn conversation's
   first message). ``prompt`` = system prefix + ``tools=`` JSON; ``tools`` = the tool part only.
2. The slope: 10 ... 5,000 synthetic tools (Seal-Tools tools, shuffled with a fixed seed, renamed
   ``synNNNN_<name>``, 10 per bundle, the bundle described by its first member's first sentence)
   added to the demo catalog. Eager grows with every tool; tooltray's prompt should stay flat
   except for the bundle menu's line per bundle. Tokens per added tool = least-squares slope.

Writes ``OUT/cost.json`` and ``OUT/cost_slope.png``; embeddings are cached in
``OUT/embeddings.db`` (shared with the retrieval suite).
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from tooltray.memory.config import Settings
from tooltray.memory.core.catalog import AllowedCatalog
from tooltray.memory.core.prompt import PromptView, bundle_menu, compose
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.store import Store
from tooltray.tools.demo import demo_script, load_demo_catalog
from tooltray.tools.importers.catalog import read_catalog
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import NATIVE_PATHS, count_tokens
from tooltray.tools.spec import Bundle, ToolSpec

PATHS = ("text", "openai", "responses", "anthropic")
ADDED = (0, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
PER_BUNDLE = 10
SEED = 688
TARGET_PER_TOOL = 2.0
SETTINGS: dict[str, Any] = {"context_window": 8192}  # 10% = 819 tokens: never "load all" here


# ----- catalogs ------------------------------------------------------------------------------


def demo_specs() -> tuple[list[ToolSpec], list[Bundle]]:
    """The demo catalog's tools (CORE pinned) and described bundles."""
    return load_demo_catalog()


def synthetic_tools(data: Path, n: int, seed: int = SEED) -> tuple[list[ToolSpec], list[Bundle]]:
    """``n`` tools derived from Seal-Tools: fixed shuffle, renamed, ``PER_BUNDLE`` per bundle.

    Past the corpus size (4,076) the shuffled order repeats under new names.
    """
    source = read_catalog(data / "sealtools" / "tools.jsonl", sanitize=True).tools
    order = list(range(len(source)))
    random.Random(seed).shuffle(order)
    specs: list[ToolSpec] = []
    bundles: list[Bundle] = []
    for i in range(n):
        base = source[order[i % len(order)]]
        group = f"syn_b{i // PER_BUNDLE:03d}"
        name = f"syn{i:04d}_{base.name}"[:64]
        specs.append(base.model_copy(update={"name": name, "bundle": group, "source": "syn"}))
    for start in range(0, n, PER_BUNDLE):
        members = specs[start : start + PER_BUNDLE]
        words = members[0].first_sentence().rstrip(".").split()[:12]
        desc = " ".join(words) or "Synthetic tools"
        bundles.append(
            Bundle(
                name=str(members[0].bundle),
                description=desc,
                members=tuple(s.name for s in members),
            )
        )
    return specs, bundles


def registry_of(specs: Sequence[ToolSpec], bundles: Sequence[Bundle]) -> ToolRegistry:
    """A registry over the given tools and bundles (catalog layer)."""
    return ToolRegistry(list(specs), bundles=list(bundles))


def bfcl_catalog(data: Path) -> ToolRegistry:
    """bfcl_multiturn (group = bundle)."""
    return ToolRegistry.from_catalog(data / "bfcl_multiturn" / "tools.jsonl", sanitize=True)


def bfcl_first_queries(data: Path) -> list[str]:
    """The first user message of every bfcl_multiturn dev conversation."""
    text = (data / "bfcl_multiturn" / "queries.dev.jsonl").read_text("utf-8")
    rows = [json.loads(x) for x in text.splitlines() if x.strip()]
    return [r["query"] for r in rows if r["id"].endswith("_t0")]


def demo_queries() -> list[str]:
    """The demo script's user messages, each as the first message of a session."""
    return [str(t["user"]) for t in demo_script()]


# ----- measuring -----------------------------------------------------------------------------


def prompt_tokens(view: PromptView) -> int:
    """Tokens the model is sent for tools: the system prefix, plus ``tools=`` on native paths."""
    extra = view.tool_tokens if view.path in NATIVE_PATHS else 0
    return count_tokens(view.system_prefix).n + extra


def eager_view(registry: ToolRegistry, settings: Settings) -> PromptView:
    """What the prompt is with every allowed tool and no menu (tooltray off)."""
    return compose(
        session_id="eager",
        turn=1,
        path=settings.path,
        mode="all",
        instructions=settings.instructions,
        specs=registry.allowed(),
        menu="",
        eager_tokens=0,
    )


def first_turns(
    registry: ToolRegistry, path: str, queries: Sequence[str], cache: Store, db: Path
) -> list[PromptView]:
    """The trinket's first-turn view for each query (one new session each)."""
    url = f"sqlite:///{db}"
    settings = Settings(db=url, path=path, **SETTINGS)
    planner = AllowedCatalog(registry, settings, cache)  # document embeddings cached across runs
    store = Store(url)
    trinket = ToolLoaderTrinket(registry, store, settings=settings, catalog=planner)
    try:
        run = uuid.uuid4().hex[:8]
        return [
            trinket.prepare(f"cost-{run}-{i}", [{"role": "user", "content": q}])
            for i, q in enumerate(queries)
        ]
    finally:
        trinket.close()
        store.close()


def _mean(values: Sequence[float]) -> float:
    return round(statistics.fmean(values), 1) if values else 0.0


def measure_path(
    registry: ToolRegistry, path: str, queries: Sequence[str], cache: Store, db: Path
) -> dict[str, Any]:
    """Eager against loaded tokens on one path."""
    settings = Settings(db="sqlite://", path=path, **SETTINGS)
    eager = eager_view(registry, settings)
    views = first_turns(registry, path, queries, cache, db)
    menu = bundle_menu(registry.bundles())
    tools = [v.tool_tokens for v in views]
    return {
        "eager_tools": eager.tool_tokens,
        "eager_prompt": prompt_tokens(eager),
        "tools": _mean(tools),
        "tools_min": min(tools),
        "tools_max": max(tools),
        "menu": count_tokens(menu).n if menu else 0,
        "prompt": _mean([prompt_tokens(v) for v in views]),
        "loaded": _mean([len(v.loaded) for v in views]),
        "modes": sorted({v.mode for v in views}),
        "ratio_tools": round(statistics.fmean(tools) / eager.tool_tokens, 4),
        "ratio_prompt": round(
            statistics.fmean(prompt_tokens(v) for v in views) / prompt_tokens(eager), 4
        ),
    }


def catalog_costs(data: Path, cache: Store, folder: Path, quick: bool) -> dict[str, Any]:
    """Both catalogs, every path."""
    demo_reg = registry_of(*demo_specs())
    bfcl_queries = bfcl_first_queries(data)[: 20 if quick else None]
    catalogs = {
        "demo": (demo_reg, demo_queries()),
        "bfcl_multiturn": (bfcl_catalog(data), bfcl_queries),
    }
    out: dict[str, Any] = {}
    for name, (reg, queries) in catalogs.items():
        out[name] = {
            "tools": len(reg.allowed()),
            "bundles": len(reg.bundles()),
            "queries": len(queries),
            "paths": {
                p: measure_path(reg, p, queries, cache, folder / f"{name}-{p}.db") for p in PATHS
            },
        }
    return out


def compact_menu(bundles: Sequence[Bundle]) -> str:
    """A suggested cheaper menu: bundle names only, one line (for the estimate, not used)."""
    names = ", ".join(sorted(b.name for b in bundles))
    return f"Tool bundles you can load with load_tools: {names}."


def slope_point(
    data: Path, added: int, queries: Sequence[str], cache: Store, folder: Path
) -> dict[str, Any]:
    """Eager and tooltray prompt tokens with ``added`` synthetic tools on every path."""
    base_specs, base_bundles = demo_specs()
    syn_specs, syn_bundles = synthetic_tools(data, added)
    reg = registry_of(base_specs + syn_specs, base_bundles + syn_bundles)
    point: dict[str, Any] = {"added": added, "bundles": len(reg.bundles()), "paths": {}}
    for path in PATHS:
        settings = Settings(db="sqlite://", path=path, **SETTINGS)
        views = first_turns(reg, path, queries, cache, folder / f"slope-{added}-{path}.db")
        menu = bundle_menu(reg.bundles())
        point["paths"][path] = {
            "eager": prompt_tokens(eager_view(reg, settings)),
            "tooltray": _mean([prompt_tokens(v) for v in views]),
            "tools": _mean([v.tool_tokens for v in views]),
            "menu": count_tokens(menu).n if menu else 0,
            "compact_menu": count_tokens(compact_menu(reg.bundles())).n if menu else 0,
            "synthetic_loaded": _mean([sum(n.startswith("syn") for n in v.loaded) for v in views]),
        }
    return point


def fit(points: Sequence[dict[str, Any]], path: str, key: str) -> float:
    """Least-squares tokens per added tool."""
    x = np.array([p["added"] for p in points], dtype=float)
    y = np.array([p["paths"][path][key] for p in points], dtype=float)
    return round(float(np.polyfit(x, y, 1)[0]), 3)


def slope(data: Path, cache: Store, folder: Path, quick: bool) -> dict[str, Any]:
    """Every slope point and the fitted tokens per added tool, per path."""
    sizes = [a for a in ADDED if not quick or a <= 200]
    queries = demo_queries()[: 3 if quick else None]
    points = [slope_point(data, a, queries, cache, folder) for a in sizes]
    per_tool = {
        p: {k: fit(points, p, k) for k in ("eager", "tooltray", "tools", "menu", "compact_menu")}
        for p in PATHS
    }
    return {
        "base": "demo",
        "per_bundle": PER_BUNDLE,
        "seed": SEED,
        "queries": len(queries),
        "points": points,
        "tokens_per_added_tool": per_tool,
        "target_per_tool": TARGET_PER_TOOL,
        "met": {p: per_tool[p]["tooltray"] <= TARGET_PER_TOOL for p in PATHS},
    }


# ----- output --------------------------------------------------------------------------------


def cost_table(costs: dict[str, Any]) -> Table:
    """Eager against loaded, per catalog and path."""
    out = Table(title="tool prompt cost, first turn (o200k tokens; loaded = mean over queries)")
    cols = ["catalog", "path", "eager tools", "loaded tools (min-max)", "tools %", "menu"]
    cols += ["eager prompt", "loaded prompt", "prompt %", "# loaded"]
    for c in cols:
        out.add_column(c, justify="left" if c in ("catalog", "path") else "right")
    for name, cat in costs.items():
        for path, m in cat["paths"].items():
            out.add_row(
                f"{name} ({cat['tools']} tools)",
                path,
                str(m["eager_tools"]),
                f"{m['tools']} ({m['tools_min']}-{m['tools_max']})",
                f"{100 * m['ratio_tools']:.1f}",
                str(m["menu"]),
                str(m["eager_prompt"]),
                str(m["prompt"]),
                f"{100 * m['ratio_prompt']:.1f}",
                str(m["loaded"]),
            )
    return out


def slope_table(result: dict[str, Any]) -> Table:
    """Prompt tokens per slope point, and the fitted tokens per added tool."""
    out = Table(title="slope: prompt tokens as synthetic tools are added to the demo catalog")
    out.add_column("added", justify="right")
    out.add_column("bundles", justify="right")
    for p in PATHS:
        out.add_column(f"{p} eager", justify="right")
        out.add_column(f"{p} tooltray", justify="right")
    for point in result["points"]:
        cells = [str(point["added"]), str(point["bundles"])]
        for p in PATHS:
            cells += [str(point["paths"][p]["eager"]), str(point["paths"][p]["tooltray"])]
        out.add_row(*cells)
    rate = result["tokens_per_added_tool"]
    cells = ["tokens/tool", ""]
    for p in PATHS:
        cells += [f"{rate[p]['eager']:.2f}", f"{rate[p]['tooltray']:.2f}"]
    out.add_row(*cells)
    return out


def plot(result: dict[str, Any], file: Path) -> None:
    """Eager against tooltray prompt tokens (log-log, left); tooltray's parts (linear, right)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = result["points"]
    added = [p["added"] for p in points]
    x = [max(a, 1) for a in added]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    for path in PATHS:
        eager = [p["paths"][path]["eager"] for p in points]
        line = left.plot(x, eager, "--", label=f"{path} eager")
        ours = [p["paths"][path]["tooltray"] for p in points]
        left.plot(x, ours, "-o", color=line[0].get_color(), label=f"{path} tooltray", ms=3)
    for path, style in (("openai", "-o"), ("text", "-s")):
        right.plot(
            added,
            [p["paths"][path]["tooltray"] for p in points],
            style,
            ms=3,
            label=f"{path}: tooltray prompt",
        )
    parts = (("menu", ":", "bundle menu"), ("compact_menu", "-.", "compact menu (suggested)"))
    for key, style, label in (("tools", "--", "tools= (capped by token_budget)"), *parts):
        right.plot(
            added, [p["paths"]["openai"][key] for p in points], style, label=f"openai {label}"
        )
    left.set(
        xscale="log",
        yscale="log",
        xlabel="synthetic tools added (0 shown at 1)",
        ylabel="prompt tokens (o200k)",
        title="eager vs tooltray, first turn",
    )
    right.set(
        xlabel="synthetic tools added (10 per bundle)",
        ylabel="tokens (o200k)",
        title="tooltray's prompt and its parts: the growth is the bundle menu",
    )
    left.legend(fontsize=7)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(file, dpi=120)
    plt.close(fig)


def run(data_dir: Path, out_dir: Path, *, quick: bool = False) -> dict[str, Any]:
    """The suite: catalog costs on every path, then the slope with its plot."""
    cache = Store(f"sqlite:///{out_dir / 'embeddings.db'}", auto_upgrade=True)
    console = Console(width=200)
    with tempfile.TemporaryDirectory(prefix="tooltray-cost-") as tmp:
        folder = Path(tmp)
        costs = catalog_costs(data_dir, cache, folder, quick)
        console.print(cost_table(costs))
        result = slope(data_dir, cache, folder, quick)
    console.print(slope_table(result))
    plot(result, out_dir / "cost_slope.png")
    defaults = Settings(db="sqlite://")
    settings = {k: getattr(defaults, k) for k in ("max_tools", "token_budget", "growth")}
    settings.update(SETTINGS, activation_share=defaults.activation_share, encoding="o200k_base")
    return {
        "settings": settings,
        "catalogs": costs,
        "slope": result,
        "plot": str(out_dir / "cost_slope.png"),
    }


if __name__ == "__main__":  # the same flags and JSON as ``python bench/run.py cost``
    import sys

    from run import main

    raise SystemExit(main(["cost", *sys.argv[1:]]))
