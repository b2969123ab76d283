"""Suite ``frontier``: session cost against first-pass recall, for the settings a user can pick.

``python bench/run.py frontier [--corpus NAME ...] [--past-split] [--quick]``. Issue 26 asks,
where a corpus cannot have both its cost and its first-pass target, for the frontier: each
point is one run of the ``session`` suite (a subprocess, so each point's settings come from
the ``TOOLTRAY_*`` environment as a user's would) on the native and the text path:

- ``latency`` (the default): ``opening = "priced"``, ``cost_profile = "latency"``;
- ``price``: ``opening = "priced"``, ``cost_profile = "price"``;
- ``share``: ``opening = "share"`` (the activation-share rule, before issue 26's pricing).

Each point is priced under both profiles (``bench/pricing.py``) beside eager (1.0 at first-pass
1.0), the oracle and the perfect-search peer, which the same runs price. Writes
``frontier.json``, prints one table, and draws ``frontier.svg``: one panel per corpus and
profile, first-pass across, cost / eager up.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
CORPORA = ("bfcl_multiturn", "apibank", "bfcl_small")
POINTS: dict[str, dict[str, str]] = {
    "latency": {"TOOLTRAY_OPENING": "priced", "TOOLTRAY_COST_PROFILE": "latency"},
    "price": {"TOOLTRAY_OPENING": "priced", "TOOLTRAY_COST_PROFILE": "price"},
    "share": {"TOOLTRAY_OPENING": "share"},
}
PROFILES = ("price", "latency")


def _session(data: Path, corpus: str, env: dict[str, str], opts: argparse.Namespace) -> Any:
    """One ``session`` suite run in a subprocess; its JSON."""
    with tempfile.TemporaryDirectory(prefix="tooltray-frontier-") as out:
        argv = [sys.executable, str(HERE / "run.py"), "session", "--corpus", corpus]
        argv += ["--data", str(data), "--out", out, "--path", "openai", "--path", "text"]
        argv += ["--past-split"] * opts.past_split + ["--quick"] * opts.quick
        subprocess.run(argv, env={**os.environ, **env}, check=True, capture_output=True)
        return json.loads((Path(out) / "session.json").read_text(encoding="utf-8"))


def _rows(corpus: str, point: str, result: Any) -> list[dict[str, Any]]:
    """One row per run (path x history) of one point."""
    rows = []
    for run, r in result["runs"].items():
        row: dict[str, Any] = {"corpus": corpus, "point": point, "run": run}
        row["first_pass"] = r["metrics"]["first_pass_recall_turn"]
        row["escapes_per_turn"] = r["metrics"]["escape_rate_per_turn"]
        for profile in PROFILES:
            cost = r["cost"][profile]
            row[profile] = cost["tooltray/eager"]
            row[f"{profile}_oracle"] = cost["oracle/eager"]
            row[f"{profile}_search"] = cost["perfect_search/eager"]
            row[f"{profile}_real_search"] = cost["real_search/eager"]
            row[f"{profile}_x_oracle"] = cost["tooltray/oracle"]
        rows.append(row)
    return rows


def _table(rows: Sequence[dict[str, Any]]) -> Table:
    table = Table(title="frontier: session cost / eager against first-pass recall")
    for col in ("run", "point", "first-pass", "price", "latency", "search price", "oracle price"):
        table.add_column(col, justify="left" if col in ("run", "point") else "right")
    for r in rows:
        cells = [r["first_pass"], r["price"], r["latency"], r["price_search"], r["price_oracle"]]
        table.add_row(r["run"], r["point"], *(f"{c:.3f}" for c in cells))
    return table


def _panel(rows: Sequence[dict[str, Any]], profile: str, x0: int, y0: int) -> list[str]:
    """One panel: first-pass 0.7-1.0 across, cost / eager 0-1.2 up; eager at (1, 1)."""
    w, h = 260, 180

    def at(fp: float, cost: float) -> tuple[float, float]:
        x = x0 + 30 + (min(max(fp, 0.7), 1.0) - 0.7) / 0.3 * (w - 40)
        return x, y0 + h - 20 - min(cost, 1.2) / 1.2 * (h - 40)

    title = f"{rows[0]['run'].split('/')[0]}/{rows[0]['run'].split('/')[1]}, {profile}"
    out = [f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#ccc"/>']
    out.append(f'<text x="{x0 + 6}" y="{y0 + 14}" font-size="11">{title}</text>')
    for fp, cost, label in ((0.7, 0.0, "0.7"), (1.0, 0.0, "1.0"), (0.7, 1.0, "1.0")):
        x, y = at(fp, cost)
        dx, dy = (-24, 4) if label == "1.0" and cost else (-8, 14)
        out.append(f'<text x="{x + dx:.0f}" y="{y + dy:.0f}" font-size="9">{label}</text>')
    ex, ey = at(1.0, 1.0)
    out.append(f'<circle cx="{ex}" cy="{ey}" r="4" fill="#888"><title>eager</title></circle>')
    sx, sy = at(0.7, rows[0][f"{profile}_search"])
    out.append(
        f'<line x1="{sx}" y1="{sy}" x2="{ex}" y2="{sy}" stroke="#c62828" '
        'stroke-dasharray="4"><title>perfect search</title></line>'
    )
    colours = {"latency": "#1565c0", "price": "#2e7d32", "share": "#6a1b9a"}
    for r in rows:
        x, y = at(r["first_pass"], r[profile])
        label = f"{r['point']} {r['run'].rsplit('/', 1)[1]}"
        fill = colours[r["point"]] if r["run"].endswith("/none") else "white"
        out.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{fill}" '
            f'stroke="{colours[r["point"]]}"><title>{label}</title></circle>'
        )
    return out


def _svg(rows: Sequence[dict[str, Any]]) -> str:
    """Panels per corpus/path (rows) and profile (columns); filled = no history."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r["run"].rsplit("/", 1)[0], []).append(r)
    parts = []
    for i, group in enumerate(groups.values()):
        for j, profile in enumerate(PROFILES):
            parts += _panel(group, profile, 10 + j * 270, 10 + i * 190)
    legend = "first-pass across (0.7-1.0), cost / eager up (0-1.2); filled: no history, hollow: "
    legend += "past-split; blue latency, green price, purple share; grey eager; red perfect search"
    parts.append(f'<text x="10" y="{20 + 190 * len(groups)}" font-size="9">{legend}</text>')
    height = 30 + 190 * len(groups)
    body = "\n".join(parts)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="560" height="{height}">\n{body}\n</svg>\n'
    )


def run_args(data_dir: Path, out_dir: Path, opts: argparse.Namespace) -> dict[str, Any]:
    """Entry point for ``bench/run.py`` with this suite's flags."""
    rows = []
    for corpus in opts.corpus or CORPORA:
        for point, env in POINTS.items():
            rows += _rows(corpus, point, _session(data_dir, corpus, env, opts))
    Console(width=160).print(_table(rows))
    (out_dir / "frontier.svg").write_text(_svg(rows), encoding="utf-8")
    return {"points": POINTS, "rows": rows}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This suite's flags, for ``bench/run.py``."""
    parser.add_argument("--corpus", action="append", help="corpus folder name (repeatable)")
    parser.add_argument("--past-split", action="store_true", help="also with history")
