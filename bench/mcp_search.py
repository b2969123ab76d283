"""Suite ``mcp_search``: after a model-written ``load_tools({"query": ...})``, is the tool loaded?

``python bench/run.py mcp_search --data bench/data/mcp/corpus [--corpus mcp20 ...] [--sample N]
[--past-split]``.
Each row of a corpus's ``searches.jsonl`` (``bench/mcp_queries.py``: one search per needed tool
and query shape) is sent through the trinket's public API on a store holding only the catalog's
embeddings, and the needed tool is looked for in ``trinket.loaded(session)``:

- ``cold``: a fresh session whose first act is the search (a gateway session over MCP, where the
  user's text never reaches tooltray);
- ``in turn``: the turn's messages are prepared first (the opening), then the search: loaded by
  either;
- ``gateway``: the searches of one turn and shape in one session, in order, the first of them
  also selecting on its text as the gateway does (no user text reaches it otherwise).

``--past-split`` runs each search on a store that learned from the sessions of the other fold of
conversations (the session bench's ``--past-split``: a deployment with history). ``--searches``
(with it) says how the history fold's simulated model queried for a missing tool, as the session
bench's option: the user's request once a turn (``request``, the default), or each need's own
model-written search (``mixed``: one shape a need), as a real deployment's searches would be.

``--written`` measures the searches a model wrote (``searches.written.jsonl``,
``bench/mcp_written.py``) instead: the searches of one turn, server and protocol run in order in
one session (a model searching for each operation it needs there), and each needed tool counts
once, loaded or not after them; shares by protocol (``menu``: the model saw the bundle menu and
wrote any form; ``tool_assistant``: no menu, ``<tool_assistant>`` server kind and job).

Also the fixed part each corpus pays on every call: the bundle menu plus the meta-tools'
definitions, o200k tokens, per path (``fixed`` below).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import session  # noqa: E402
from corpora import Conversation, load_conversations, load_registry, messages_for  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from session import Stores, base_settings, folds, open_trinket  # noqa: E402

from tooltray.memory.metatools.meta_tools import LOAD_TOOLS  # noqa: E402
from tooltray.tools.render import count_tokens  # noqa: E402

CORPORA = ("mcp20", "mcp70", "mcp300")
QUICK = 40
#: at most this long for the catalog's vectors (a 527-tool catalog on a loaded 2-core machine)
WAIT_S = 900.0
#: folds of conversations with ``--past-split``: each measured on the other's history (as
#: ``session.py``'s default ``--folds``)
PAST_FOLDS = 2


def read_searches(data: Path, corpus: str, name: str = "searches.jsonl") -> list[dict[str, Any]]:
    """The corpus's model-written searches (``name``: those a model wrote, ``--written``)."""
    lines = (data / corpus / name).read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def written_groups(data: Path, corpus: str) -> list[dict[str, Any]]:
    """The corpus's model-written searches, one row per turn, server and protocol:
    ``{"turn", "shape": protocol, "queries", "tools"}`` (a turn's operations on one server are
    written in the order the writer needed them, not the gold's)."""
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in read_searches(data, corpus, "searches.written.jsonl"):
        key = (row["turn"], row["server"], row["protocol"])
        group = groups.setdefault(
            key, {"turn": key[0], "shape": key[2], "queries": [], "tools": []}
        )
        group["queries"].append(row["query"])
        group["tools"].append(row["tool"])
    return list(groups.values())


def sampled(searches: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """About ``n`` searches: every k-th needed tool with all its shapes (a plain every-k-th row
    would keep one shape only, as the file lists the four shapes of a need together)."""
    needs: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in searches:
        needs[(row["turn"], row["tool"])].append(row)
    groups = list(needs.values())
    per = max(1, round(len(searches) / max(1, len(groups))))
    step = max(1, len(groups) * per // n) if n else 1
    return [row for group in groups[::step][: -(-n // per) if n else None] for row in group]


def fixed_part(trinket: Any, path: str) -> dict[str, int]:
    """Tokens paid on every call: the bundle menu and the meta-tools the view leads with, as the
    planner prices them (``AllowedCatalog._fixed``: what selection shows whatever it picks)."""
    menu = trinket.catalog.menu()
    total = int(trinket.catalog._fixed(menu))
    out = {"menu": count_tokens(menu).n, "total": total}
    return {**out, "meta_tools": total - out["menu"], "eager": trinket.catalog.eager_tokens()}


def run_search(trinket: Any, sid: str, row: dict[str, Any], messages: Any) -> bool:
    """One search; True when the needed tool is loaded afterwards (a group of one)."""
    group = {"queries": [row["query"]], "tools": [str(row["tool"])]}
    return run_written(trinket, sid, group, messages)[0]


def run_written(
    trinket: Any, sid: str, group: dict[str, Any], messages: Any, gateway: bool = False
) -> list[bool]:
    """One group of written searches in one session (after the turn's messages where given; in
    the ``gateway``, the first search's text selects too); per needed tool, loaded afterwards."""
    if messages is not None:
        trinket.prepare(sid, messages)
    for k, query in enumerate(group["queries"]):
        trinket.handle_meta(sid, LOAD_TOOLS, {"query": query})
        if gateway and k == 0:
            trinket.prepare(sid, [{"role": "user", "content": query}])
    loaded = trinket.loaded(sid)
    return [tool in loaded for tool in group["tools"]]


def run_gateway(trinket: Any, seeded: set[str], row: dict[str, Any]) -> bool:
    """One search in a gateway session (one per turn and shape): the session's first search
    also runs selection on its text, as the gateway does (``memory/gateway/hints.py``)."""
    sid = f"g-{row['turn']}-{row['shape']}"
    trinket.handle_meta(sid, LOAD_TOOLS, {"query": row["query"]})
    if sid not in seeded:
        seeded.add(sid)
        trinket.prepare(sid, [{"role": "user", "content": row["query"]}])
    return str(row["tool"]) in trinket.loaded(sid)


def measure(
    data: Path,
    corpus: str,
    path: str,
    quick: bool,
    sample: int = 0,
    past_split: bool = False,
    searches_as: str = "request",
    written: bool = False,
) -> dict[str, Any]:
    """Every mode for every search of ``corpus`` on ``path``; shares by shape. With
    ``past_split``, each search runs on a store holding the replayed sessions of the other fold
    of conversations (``session.py``'s ``--past-split``: the deployment's history), whose
    simulated model queried as ``searches_as`` says (``session.model_searches``)."""
    registry, names = load_registry(data, corpus)
    convs = load_conversations(data, corpus, names)
    session.use_searches(data, corpus, names, searches_as)
    turns = {f"{c.id}_t{t.number}": t for c in convs for t in c.turns}
    if written:
        searches = written_groups(data, corpus)[: QUICK if quick else None]
    else:
        searches = sampled(read_searches(data, corpus), QUICK if quick else sample)
    hits: dict[str, dict[str, list[bool]]] = {
        "cold": defaultdict(list),
        "in_turn": defaultdict(list),
        "gateway": defaultdict(list),
    }
    out: dict[str, Any] = {"searches": len(searches), "tools": len(registry.allowed())}
    with tempfile.TemporaryDirectory(prefix="tooltray-mcp-search-") as tmp:
        settings = base_settings(path)
        groups = stores(Path(tmp), registry, convs, settings, searches, past_split)
        for url, rows in groups:
            with open_trinket(registry, url, settings) as trinket:
                out.setdefault("fixed", fixed_part(trinket, path))
                out["dense"] = with_vectors(trinket) and out.get("dense", True)
                run_rows(trinket, rows, turns, names, hits)
    head = {"fixed": out["fixed"], "searches": out["searches"], "tools": out["tools"]}
    history = {"history": "past-split"} if past_split else {}
    if past_split and searches_as != "request":
        history["history_searches"] = searches_as
    if written:
        head["searches"] = sum(len(g["tools"]) for g in searches)  # needs, each counted once
    return {**head, "dense": out["dense"], **history, "shares": _shares(hits)}


Rows = list[tuple[int, dict[str, Any]]]
"""Searches with their index in the sample (their sessions' ids)."""


def run_rows(
    trinket: Any, rows: Rows, turns: dict[str, Any], names: dict[str, str], hits: Any
) -> None:
    """Each search of ``rows`` in every mode on ``trinket``, into ``hits`` by mode and shape."""
    seeded: set[str] = set()
    for i, row in rows:
        if "queries" in row:
            run_group(trinket, i, row, turns, names, hits)
            continue
        row = {**row, "tool": names.get(row["tool"], row["tool"])}
        turn = turns.get(row["turn"])
        hits["cold"][row["shape"]].append(run_search(trinket, f"c{i}", row, None))
        msgs = messages_for(turn) if turn is not None else None
        hits["in_turn"][row["shape"]].append(run_search(trinket, f"t{i}", row, msgs))
        hits["gateway"][row["shape"]].append(run_gateway(trinket, seeded, row))


def run_group(
    trinket: Any, i: int, group: dict[str, Any], turns: dict[str, Any], names: Any, hits: Any
) -> None:
    """One group of written searches in every mode, into ``hits`` by mode and protocol."""
    group = {**group, "tools": [names.get(t, t) for t in group["tools"]]}
    turn = turns.get(group["turn"])
    msgs = messages_for(turn) if turn is not None else None
    for mode, sid, given in (("cold", f"c{i}", None), ("in_turn", f"t{i}", msgs)):
        hits[mode][group["shape"]] += run_written(trinket, sid, group, given)
    hits["gateway"][group["shape"]] += run_written(trinket, f"g{i}", group, None, gateway=True)


def stores(
    tmp: Path,
    registry: Any,
    convs: list[Conversation],
    settings: dict[str, Any],
    searches: list[dict[str, Any]],
    past_split: bool,
) -> Iterator[tuple[str, Rows]]:
    """The stores the searches run on, each with its searches: one store holding only the
    catalog's vectors; with ``past_split``, per fold of conversations a store where the other
    fold's sessions were replayed (``session.Stores.with_history``: the session bench's own
    learning path) and the searches of the fold's turns (a search of no conversation's turn
    is measured with the first fold)."""
    rows = list(enumerate(searches))
    if not past_split:
        yield f"sqlite:///{tmp}/store.db", rows
        return
    held = Stores(tmp, registry, settings)
    parts = folds(convs, PAST_FOLDS)
    fold_of = {f"{c.id}_t{t.number}": k for k, p in enumerate(parts) for c in p for t in c.turns}
    for k in range(len(parts)):
        past = [c for j, p in enumerate(parts) if j != k for c in p]
        mine = [(i, r) for i, r in rows if fold_of.get(r["turn"], 0) == k]
        yield held.url(held.with_history(past)), mine


def with_vectors(trinket: Any) -> bool:
    """Wait for the catalog's tool vectors (``embed_catalog = "background"`` computes them off
    the turn's path): the suite measures the answers of a catalog whose vectors are known, not
    the first minute (``bench/first_minute.py``). Without the wait, dense scores joined
    whenever the worker finished, or never in a run on a loaded machine."""
    return bool(trinket.catalog.selector().index.wait_for_vectors(WAIT_S))


def _shares(hits: dict[str, dict[str, list[bool]]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for mode, by_shape in hits.items():
        every = [h for hs in by_shape.values() for h in hs]
        out[mode] = {s: round(sum(h) / len(h), 3) for s, h in sorted(by_shape.items())}
        out[mode]["all"] = round(sum(every) / max(1, len(every)), 3)
    return out


def _table(results: dict[str, Any]) -> Table:
    table = Table(title="mcp_search: needed tool loaded after a model-written load_tools query")
    cols = ["run", "tools", "fixed (menu+meta)", "mode", *SHAPE_COLS]
    for col in cols:
        table.add_column(col, justify="left" if col in ("run", "mode") else "right")
    for run, r in results.items():
        for mode, shares in r["shares"].items():
            fixed = f"{r['fixed']['total']:,} ({r['fixed']['menu']}+{r['fixed']['meta_tools']})"
            cells = [shares.get(s) for s in SHAPE_COLS]
            shown = (f"{c:.3f}" if c is not None else "-" for c in cells)
            table.add_row(run, str(r["tools"]), fixed, mode, *shown)
    return table


SHAPE_COLS = (
    "all",
    "keywords",
    "sentence",
    "server_tool",
    "guessed_name",
    "menu",
    "tool_assistant",
)


def run_args(data_dir: Path, out_dir: Path, opts: argparse.Namespace) -> dict[str, Any]:
    """Entry point for ``bench/run.py`` with this suite's flags."""
    results = {}
    for corpus in opts.corpus or CORPORA:
        for path in opts.paths or ["openai", "text"]:
            key = f"{corpus}/{path}" + ("/past-split" if opts.past_split else "")
            key += "/written" if opts.written else ""
            results[key] = measure(
                data_dir,
                corpus,
                path,
                opts.quick,
                opts.sample,
                opts.past_split,
                opts.searches,
                opts.written,
            )
    Console(width=170).print(_table(results))
    return {"runs": results}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This suite's flags, for ``bench/run.py``."""
    parser.add_argument("--corpus", action="append", help="corpus folder name (repeatable)")
    parser.add_argument("--path", dest="paths", action="append", choices=("openai", "text"))
    parser.add_argument("--sample", type=int, default=0, help="every n-th search, this many")
    parser.add_argument(
        "--past-split", action="store_true", help="history = the other fold's sessions"
    )
    session.add_searches(parser, "with --past-split: the history's queries for a missing tool")
    parser.add_argument(
        "--written", action="store_true", help="the searches a model wrote (mcp_written.py)"
    )
