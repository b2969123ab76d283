"""Suite ``session``: replay multi-turn corpora through the real trinket, store and embedder.

``python bench/run.py session [--data DIR] [--corpus NAME ...] [--past DIR] [--past-split]
[--online] [--quick] [--reveal append|prefix] [--breakdown]`` (``--breakdown``: each part's
share of tooltray's price, ``breakdown.py``). Any corpus in the shared format (:mod:`corpora`)
replays, turn by turn:

1. ``view = trinket.prepare(session, messages)`` (the turn's earlier user messages with assistant
   placeholders, then its own): *first-pass recall* = every gold tool is in the view;
2. a simulated model calls each gold tool. It sees only the prompt rendered for it, so a tool not
   offered is recovered without its name: ``load_tools`` with the user's request as the query,
   then the bundle the menu lists for it, then every tool (``load_tools(["*"])``, the
   fallback), then (a fallback that answered with names) the tool by its name; each call is an
   *escape*. *Recall after recovery* = every gold tool was callable when it was called. Each call
   emits ``tool-used``, ``turn-completed`` closes the turn, and the agent prepares again after
   every call (a real loop calls ``prepare`` before every model request);
3. tool tokens of the turn's first view (plus the bundle menu) against eager, and the prefix hash
   at the turn's start and at every prepare (mid-turn changes);
4. every model call's prefix (``layout.view_prefix``) and, with ``reveal = "append"``, the note
   the turn-start view weaves before the turn's user message, for the session cost (``peers``).

History: ``none`` replays every conversation on a fresh copy of a store that holds only the
catalog's embeddings; ``past-split`` measures each fold of conversations on a store holding the
replayed history of the other folds; ``past`` (``--past DIR``) on the history of another folder;
``online`` replays every conversation in order on one growing store and plots the learning curve.
``context_window`` is 8192 so small catalogs are not loaded whole. ``--restart`` adds the
restart-equality variants (a fresh Store + trinket per turn; one subprocess per turn index).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import breakdown  # noqa: E402
import peers  # noqa: E402
from corpora import (  # noqa: E402
    Conversation,
    load_conversations,
    load_registry,
    messages_for,
    registries,
)
from layout import view_prefix  # noqa: E402
from mcp_queries import SHAPES  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed  # noqa: E402
from tooltray.memory.config import Settings  # noqa: E402
from tooltray.memory.core.catalog import AllowedCatalog  # noqa: E402
from tooltray.memory.core.menu import listed  # noqa: E402
from tooltray.memory.core.prompt import PromptView  # noqa: E402
from tooltray.memory.core.trinket import ToolLoaderTrinket  # noqa: E402
from tooltray.memory.eval.recall import evaluate_store  # noqa: E402
from tooltray.memory.metatools.meta_tools import EVERY_TOOL, LOAD_TOOLS  # noqa: E402
from tooltray.memory.store import Store  # noqa: E402
from tooltray.tools.registry import ToolRegistry  # noqa: E402
from tooltray.tools.render import (
    NATIVE_PATHS,  # noqa: E402
    count_tokens,  # noqa: E402
)

HERE = Path(__file__).resolve()
DEFAULT_DATA = HERE.parents[2] / "shared" / "data"
CORPORA = ("bfcl_multiturn", "apibank")
PATHS = ("openai", "text")
CONTEXT_WINDOW = 8192
QUICK_CONVERSATIONS = 12
TARGETS = {
    "recall_after_recovery": 1.0,
    "first_pass_recall": 0.90,
    "escape_rate_per_turn": 0.15,
    "tool_token_ratio_with_menu": 0.12,
    "prefix_changes_incl_midturn_per_session": 1.0,
}


@dataclass
class TurnResult:
    """What one replayed turn looked like; equal across restart variants by construction."""

    conv: str
    index: int
    turn: int
    gold: list[str]
    missing_first: list[str]
    not_callable: list[str]
    escapes: int
    tool_tokens: int
    eager_tokens: int
    prefix_hash: str
    loaded_start: list[str]
    loaded_end: list[str]
    prefixes: list[str] = field(default_factory=list)
    escape_kinds: list[str] = field(default_factory=list)
    calls: list[list[Any]] = field(default_factory=list)
    note: str = ""


# ----- one turn ------------------------------------------------------------------------------


def _bundle_of(trinket: ToolLoaderTrinket, tool: str) -> str | None:
    spec = trinket.registry.get(tool)
    return spec.bundle if spec is not None else None


def _recover(
    trinket: ToolLoaderTrinket, sid: str, search: str, tool: str, tried: set[str], seen: list[str]
) -> tuple[str, str] | None:
    """The simulated model's next escape for ``tool``: a query, its bundle where the menu shows
    it, its name or bundle where an answer showed it, the fallback; ``None`` once none is left.

    It never names a tool it was not shown: first ``load_tools`` with ``search`` as the query
    (the user's request, once a turn; or, with ``--searches``, the need's own model-written
    search, :data:`SEARCHES`), then the bundle the menu lists for it (the menu is in the prompt
    on every path; the text path's block says how to load a bundle); a bundle the budgeted menu
    leaves out is not named. Then a tool by its name where an answer named it (a full set's
    refusal lists a bundle's members; a fallback's names directory), or its bundle where an
    answer's bundles line lists it (a search's next matches', a fallback's directory of
    bundles), then every tool (``load_tools(["*"])``). Returns the escape's kind and the
    meta-tool's answer (one call each); ``seen`` collects the answers names are read from: the
    queries', the menu bundles' and the fallback's.
    """
    if f"query:{search}" not in tried:
        tried.add(f"query:{search}")
        seen.append(trinket.handle_meta(sid, LOAD_TOOLS, {"query": search}))
        return "query", seen[-1]
    bundle = _bundle_of(trinket, tool)
    menu = trinket.catalog.menu_for(trinket.state(sid).snapshot.meta)[0]  # the session's own
    shown = bundle in listed(menu) if bundle else False
    if shown and f"bundle:{bundle}" not in tried:
        tried.add(f"bundle:{bundle}")
        seen.append(trinket.handle_meta(sid, LOAD_TOOLS, {"tools": [bundle]}))
        return "bundle", seen[-1]
    named = re.compile(rf"(?<![\w.-]){re.escape(tool)}(?![\w.-])")
    if f"name:{tool}" not in tried and any(named.search(text) for text in seen):
        tried.add(f"name:{tool}")
        return "name", trinket.handle_meta(sid, LOAD_TOOLS, {"tools": [tool]})
    name = re.escape(bundle or "")  # a line of its own, or on the bundles line (stop 42)
    listed_bundle = re.compile(rf"^- {name} \(\d+ tools?\)$|^- bundles: (.*, )?{name}(,|$)", re.M)
    if bundle and f"bundle:{bundle}" not in tried and any(map(listed_bundle.search, seen)):
        tried.add(f"bundle:{bundle}")
        seen.append(trinket.handle_meta(sid, LOAD_TOOLS, {"tools": [bundle]}))
        return "bundle", seen[-1]
    if "fallback" not in tried:
        tried.add("fallback")
        seen.append(trinket.handle_meta(sid, LOAD_TOOLS, {"tools": [EVERY_TOOL]}))
        return "fallback", seen[-1]
    return None


def _call(kind: str, detail: str, view: PromptView) -> list[Any]:
    """One model call for pricing: its kind, its tool or answer, the prefix it was sent."""
    if BREAKDOWN:
        breakdown.label_prefix(view)
    return [kind, detail, [[s.key, s.tokens] for s in view_prefix(view)]]


def run_turn(
    trinket: ToolLoaderTrinket, session_id: str, conv: Conversation, index: int
) -> TurnResult:
    """Replay turn ``index`` of ``conv`` as session ``session_id`` (see the module docstring)."""
    turn = conv.turns[index]
    messages = messages_for(turn)
    gold = list(turn.gold)
    view = trinket.prepare(session_id, messages)
    start = view
    prefixes = [view.prefix_hash]
    escapes, not_callable, tried, kinds = 0, [], set[str](), []
    calls: list[list[Any]] = []
    seen: list[str] = []
    for tool in gold:
        while tool not in view.loaded:
            search = SEARCHES.get((conv.id, turn.number, tool), turn.query)
            step = _recover(trinket, session_id, search, tool, tried, seen)
            if step is None:
                break
            kind, answer = step
            calls.append(_call("escape", answer, view))
            kinds.append(kind)
            escapes += 1
            view = trinket.prepare(session_id, messages)
            prefixes.append(view.prefix_hash)
        if tool not in view.loaded:
            not_callable.append(tool)
        calls.append(_call("tool", tool, view))
        emit(tool_used, session_id, ToolUsed(tool=tool, turn=view.turn))
        view = trinket.prepare(session_id, messages)
        prefixes.append(view.prefix_hash)
    calls.append(_call("final", "", view))
    emit(turn_completed, session_id, TurnCompleted(turn=view.turn))
    return TurnResult(
        conv=conv.id,
        index=index,
        turn=start.turn,
        gold=gold,
        missing_first=[g for g in gold if g not in start.loaded],
        not_callable=not_callable,
        escapes=escapes,
        tool_tokens=start.tool_tokens,
        eager_tokens=start.eager_tokens,
        prefix_hash=start.prefix_hash,
        loaded_start=list(start.loaded),
        loaded_end=list(view.loaded),
        prefixes=prefixes,
        escape_kinds=kinds,
        calls=calls,
        note=turn_note(start),
    )


def turn_note(view: PromptView) -> str:
    """The reveal note ``view.messages`` weaves before the view's own turn's user message ("" if
    none): the tools this turn's growth revealed, priced where they are appended."""
    notes: dict[int, str] = dict(view.notes)
    return notes.get(view.turn, "")


SearchMap = dict[tuple[str, int, str], str]  # (conversation, turn number, tool) -> its search
SEARCHES: SearchMap = {}  # ``--searches``: each need's model-written search, ``model_searches``
SEARCH_SHAPE = ["request"]  # ``--searches`` as given, for the ``--restart`` subprocesses
BREAKDOWN: list[bool] = []  # ``--breakdown``: label every priced segment (breakdown.py)
ORACLE: dict[str, Any] = {}  # bench-only: ``--oracle`` sets "signals" per measured fold


@contextmanager
def open_trinket(
    registry: ToolRegistry, url: str, settings: dict[str, Any]
) -> Iterator[ToolLoaderTrinket]:
    """A trinket over a new Store on ``url``; closed (signals and pool) on exit."""
    store = Store(url)
    full = Settings(db=url, **settings)
    oracle = ORACLE.get("signals")
    planner = AllowedCatalog(registry, full, store, oracle) if oracle is not None else None
    trinket = ToolLoaderTrinket(registry, store, settings=full, catalog=planner)
    try:
        yield trinket
    finally:
        trinket.close()
        store.close()


def sid_for(conv: Conversation, path: str) -> str:
    """One session per conversation and path."""
    return f"{conv.id}@{path}"


def replay_into(trinket: ToolLoaderTrinket, convs: Sequence[Conversation]) -> list[TurnResult]:
    """Every turn of ``convs`` in order through one trinket."""
    out = []
    for conv in convs:
        sid = sid_for(conv, trinket.settings.path)
        out += [run_turn(trinket, sid, conv, k) for k in range(len(conv.turns))]
    return out


def replay_continuous(
    registry: ToolRegistry, convs: Sequence[Conversation], url: str, settings: dict[str, Any]
) -> list[TurnResult]:
    """One trinket over one store for every conversation."""
    with open_trinket(registry, url, settings) as trinket:
        return replay_into(trinket, convs)


def replay_each_registry(
    registry_of: dict[str, ToolRegistry],
    convs: Sequence[Conversation],
    url: str,
    settings: dict[str, Any],
) -> list[TurnResult]:
    """Conversations in order on one store, each through a trinket over its own registry
    (per-conversation catalogs); consecutive conversations sharing a registry share a trinket."""
    out: list[TurnResult] = []
    run: list[Conversation] = []
    for conv in [*convs, None]:
        if run and (conv is None or registry_of[conv.id] is not registry_of[run[0].id]):
            out += replay_continuous(registry_of[run[0].id], run, url, settings)
            run = []
        if conv is not None:
            run.append(conv)
    return out


def replay_restart(
    registry: ToolRegistry, convs: Sequence[Conversation], url: str, settings: dict[str, Any]
) -> list[TurnResult]:
    """A brand-new Store + trinket object for every turn, over the same file."""
    out = []
    for conv in convs:
        for k in range(len(conv.turns)):
            with open_trinket(registry, url, settings) as trinket:
                out.append(run_turn(trinket, sid_for(conv, trinket.settings.path), conv, k))
    return out


def replay_subprocess(
    data: Path, corpus: str, convs: Sequence[Conversation], url: str, settings: dict[str, Any]
) -> list[TurnResult]:
    """One fresh Python process per turn index, each playing that turn of every conversation."""
    out: list[TurnResult] = []
    ids = [c.id for c in convs]
    for k in range(max(len(c.turns) for c in convs)):
        args = [sys.executable, str(HERE), "--worker", "--db", url, "--data", str(data)]
        args += ["--corpus", corpus, "--turn", str(k), "--settings", json.dumps(settings)]
        args += ["--convs", json.dumps(ids), "--searches", SEARCH_SHAPE[0]]
        done = subprocess.run(args, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"worker for turn {k} failed:\n{done.stderr[-3000:]}")
        out += [TurnResult(**json.loads(line)) for line in done.stdout.splitlines() if line]
    order = {(c.id, k): i for i, c in enumerate(convs) for k in range(len(c.turns))}
    return sorted(out, key=lambda r: order[(r.conv, r.index)])


def worker(
    data: Path, corpus: str, url: str, turn: int, convs: list[str], settings: dict[str, Any]
) -> None:
    """Subprocess entry: play turn ``turn`` of the named conversations, print JSON lines."""
    registry, names = load_registry(data, corpus)
    use_searches(data, corpus, names, SEARCH_SHAPE[0])
    wanted = set(convs)
    chosen = [c for c in load_conversations(data, corpus, names) if c.id in wanted]
    with open_trinket(registry, url, settings) as trinket:
        for conv in chosen:
            if turn < len(conv.turns):
                result = run_turn(trinket, sid_for(conv, trinket.settings.path), conv, turn)
                print(json.dumps(asdict(result)), flush=True)


# ----- histories -----------------------------------------------------------------------------


class Stores:
    """SQLite files in one folder: a template holding only the catalog's embeddings, and copies."""

    def __init__(
        self,
        folder: Path,
        registry: ToolRegistry,
        settings: dict[str, Any],
        registry_of: dict[str, ToolRegistry] | None = None,
    ) -> None:
        self.folder = folder
        self.registry = registry
        self.registry_of = registry_of or {}
        self.settings = settings
        self.n = 0
        self.template = self.fresh_path()
        with open_trinket(registry, self.url(self.template), settings) as trinket:
            trinket.catalog.selector()
            self.menu_tokens = (
                count_tokens(trinket.catalog.menu()).n if settings["path"] in NATIVE_PATHS else 0
            )

    def fresh_path(self) -> Path:
        """A new file name in the folder."""
        self.n += 1
        return self.folder / f"{self.settings['path']}-{self.n}.db"

    @staticmethod
    def url(path: Path) -> str:
        """The SQLAlchemy URL of a file."""
        return f"sqlite:///{path}"

    def copy(self, source: Path | None = None) -> Path:
        """A copy of ``source`` (default: the template)."""
        target = self.fresh_path()
        shutil.copyfile(source or self.template, target)
        return target

    def with_history(self, past: Sequence[Conversation]) -> Path:
        """A copy of the template with ``past`` replayed into it."""
        target = self.copy()
        self.replay(past, self.url(target))
        return target

    def replay(self, convs: Sequence[Conversation], url: str) -> list[TurnResult]:
        """``convs`` in order on the store at ``url``, each over the registry it sees."""
        registry_of = {c.id: self.registry_of.get(c.id, self.registry) for c in convs}
        return replay_each_registry(registry_of, convs, url, self.settings)

    def measure_each(self, convs: Sequence[Conversation], base: Path) -> list[TurnResult]:
        """Each conversation on its own copy of ``base`` (its history never leaks to the next)."""
        out = []
        for conv in convs:
            target = self.copy(base)
            out += self.replay([conv], self.url(target))
            target.unlink()
        return out


def folds(convs: Sequence[Conversation], k: int) -> list[list[Conversation]]:
    """``k`` interleaved folds of the conversations (every k-th one)."""
    return [list(convs[i::k]) for i in range(k)]


def replay_past_split(stores: Stores, convs: Sequence[Conversation], k: int) -> list[TurnResult]:
    """Each fold measured on the history of the other folds."""
    out: list[TurnResult] = []
    parts = folds(convs, k)
    for i, part in enumerate(parts):
        past = [c for j, p in enumerate(parts) if j != i for c in p]
        out += stores.measure_each(part, stores.with_history(past))
    order = {c.id: i for i, c in enumerate(convs)}
    return sorted(out, key=lambda r: (order[r.conv], r.index))


def replay_oracle(stores: Stores, convs: Sequence[Conversation], k: int) -> list[TurnResult]:
    """Each fold measured with an oracle co-use table from the other folds' gold (no store)."""
    from oracle import OracleSignals

    out: list[TurnResult] = []
    parts = folds(convs, k)
    for i, part in enumerate(parts):
        ORACLE["signals"] = OracleSignals([c for j, p in enumerate(parts) if j != i for c in p])
        try:
            out += stores.measure_each(part, stores.template)
        finally:
            ORACLE.clear()
    order = {c.id: i for i, c in enumerate(convs)}
    return sorted(out, key=lambda r: (order[r.conv], r.index))


def replay_online(stores: Stores, convs: Sequence[Conversation]) -> list[TurnResult]:
    """Every conversation in order on one store whose history grows."""
    return stores.replay(convs, stores.url(stores.copy()))


# ----- metrics -------------------------------------------------------------------------------


def prefix_changes(results: Sequence[TurnResult]) -> list[int]:
    """Per session: distinct consecutive prefix hashes at turn starts, minus one."""
    by_conv: dict[str, list[str]] = {}
    for r in results:
        by_conv.setdefault(r.conv, []).append(r.prefix_hash)
    return [sum(a != b for a, b in zip(h, h[1:], strict=False)) for h in by_conv.values()]


def midturn_changes(results: Sequence[TurnResult]) -> list[int]:
    """Per session: prefix changes over every prepare, mid-turn ones included."""
    by_conv: dict[str, list[str]] = {}
    for r in results:
        by_conv.setdefault(r.conv, []).extend(r.prefixes)
    return [sum(a != b for a, b in zip(h, h[1:], strict=False)) for h in by_conv.values()]


def _mean(values: Sequence[float]) -> float:
    return round(statistics.fmean(values), 4) if values else 0.0


def metrics(results: Sequence[TurnResult], menu_tokens: int = 0) -> dict[str, Any]:
    """Recall (first pass, after recovery; per turn and per gold tool), escapes, tokens, prefix."""
    with_gold = [r for r in results if r.gold]
    golds = sum(len(r.gold) for r in results)
    ratios = [r.tool_tokens / r.eager_tokens for r in results if r.eager_tokens]
    menu_ratios = [
        (r.tool_tokens + menu_tokens) / r.eager_tokens for r in results if r.eager_tokens
    ]
    changes = prefix_changes(results)
    kinds = [k for r in results for k in r.escape_kinds]
    return {
        "sessions": len(changes),
        "turns": len(results),
        "gold_tools": golds,
        "first_pass_recall_turn": _mean([not r.missing_first for r in with_gold]),
        "first_pass_recall_tool": round(1 - sum(len(r.missing_first) for r in results) / golds, 4)
        if golds
        else 1.0,
        "recall_after_recovery_turn": _mean([not r.not_callable for r in with_gold]),
        "recall_after_recovery_tool": round(
            1 - sum(len(r.not_callable) for r in results) / golds, 4
        )
        if golds
        else 1.0,
        "escape_rate_per_turn": _mean([r.escapes for r in results]),
        "escapes_by_kind": {k: kinds.count(k) for k in sorted(set(kinds))},
        "tool_tokens_mean": round(statistics.fmean(r.tool_tokens for r in results), 1),
        "eager_tokens": results[0].eager_tokens if results else 0,
        "tool_token_ratio": _mean(ratios),
        "tool_token_ratio_with_menu": _mean(menu_ratios),
        "menu_tokens": menu_tokens,
        "loaded_start_mean": round(statistics.fmean(len(r.loaded_start) for r in results), 1),
        "prefix_changes_per_session": _mean(changes),
        "prefix_changes_max": max(changes, default=0),
        "prefix_changes_incl_midturn_per_session": _mean(midturn_changes(results)),
        "reveal_notes": sum(bool(r.note) for r in results),
    }


def verdict(m: dict[str, Any]) -> dict[str, bool]:
    """Which targets (reported, not asserted) the metrics meet."""
    return {
        "recall_after_recovery = 1": m["recall_after_recovery_turn"] >= 1.0,
        "first_pass_recall >= 0.90": m["first_pass_recall_turn"] >= TARGETS["first_pass_recall"],
        "escapes <= 0.15/turn": m["escape_rate_per_turn"] <= TARGETS["escape_rate_per_turn"],
        "tokens+menu <= 12% of eager": m["tool_token_ratio_with_menu"]
        <= TARGETS["tool_token_ratio_with_menu"],
        "<= 1 prefix change/session incl mid-turn": m["prefix_changes_incl_midturn_per_session"]
        <= TARGETS["prefix_changes_incl_midturn_per_session"],
    }


def history_recall(url: str) -> dict[str, Any]:
    """``tooltray eval recall``'s reading of the stored history (cross-check)."""
    with Store(url) as store:
        summary: dict[str, Any] = evaluate_store(store).summary()
        return summary


def diff(a: Sequence[TurnResult], b: Sequence[TurnResult]) -> list[str]:
    """Human-readable differences between two runs (empty when identical)."""
    if len(a) != len(b):
        return [f"{len(a)} turns vs {len(b)} turns"]
    out = []
    for x, y in zip(a, b, strict=True):
        dx, dy = asdict(x), asdict(y)
        keys = [k for k in dx if dx[k] != dy[k]]
        if keys:
            out.append(f"{x.conv} t{x.index}: {', '.join(keys)}")
    return out


# ----- suite ---------------------------------------------------------------------------------


def base_settings(path: str, **extra: Any) -> dict[str, Any]:
    """The settings every replay uses (defaults made explicit, plus the path and overrides)."""
    defaults = Settings(db="sqlite://")
    keys = ["max_tools", "token_budget", "hard_max_tools", "idle_turns", "growth"]
    keys += ["activation_share", "embedder", "reveal", "opening"]
    out: dict[str, Any] = {k: getattr(defaults, k) for k in keys}
    out.update(path=path, context_window=CONTEXT_WINDOW, **extra)
    return out


def table(title: str, rows: dict[str, dict[str, Any]]) -> Table:
    """One row per run: the headline metrics."""
    out = Table(title=title)
    cols = ["run", "turns", "1st-pass turn", "1st-pass tool", "recovered turn", "escapes/turn"]
    cols += ["tokens/eager", "+menu", "prefix chg/sess", "incl mid-turn"]
    for c in cols:
        out.add_column(c, justify="left" if c == "run" else "right")
    for name, res in rows.items():
        m = res["metrics"]
        out.add_row(
            name,
            str(m["turns"]),
            f"{m['first_pass_recall_turn']:.3f}",
            f"{m['first_pass_recall_tool']:.3f}",
            f"{m['recall_after_recovery_turn']:.3f}",
            f"{m['escape_rate_per_turn']:.3f}",
            f"{m['tool_token_ratio']:.3f}",
            f"{m['tool_token_ratio_with_menu']:.3f}",
            f"{m['prefix_changes_per_session']:.2f}",
            f"{m['prefix_changes_incl_midturn_per_session']:.2f}",
        )
    return out


def cost_table(title: str, rows: dict[str, dict[str, Any]]) -> Table:
    """One row per run and profile: session cost against eager, the oracle and the peers."""
    out = Table(title=title)
    cols = ["run", "profile", "tooltray/eager", "tooltray/oracle", "perfect-search/eager"]
    cols += ["real-search/eager", "oracle/eager", "1st-pass", "escapes/turn", "prefix chg/sess"]
    for c in cols:
        out.add_column(c, justify="left" if c in ("run", "profile") else "right")
    for name, res in rows.items():
        m, cost = res["metrics"], res.get("cost") or {}
        for profile in ("price", "latency") if cost else ():
            c = cost[profile]
            out.add_row(
                name,
                profile,
                f"{c['tooltray/eager']:.3f}",
                f"{c['tooltray/oracle']:.2f}x",
                f"{c['perfect_search/eager']:.3f}",
                f"{c['real_search/eager']:.3f}",
                f"{c['oracle/eager']:.3f}",
                f"{m['first_pass_recall_turn']:.3f}",
                f"{m['escape_rate_per_turn']:.3f}",
                f"{m['prefix_changes_per_session']:.2f}",
            )
    return out


def breakdown_table(title: str, rows: dict[str, dict[str, Any]]) -> Table:
    """One row per run and profile: each part's share of tooltray's price, and the calls."""
    out = Table(title=title)
    parts = sorted(
        {
            p
            for r in rows.values()
            for k in ("price", "latency")
            for p in r["cost"].get("breakdown", {}).get(k, {})
        }
    )
    for c in ["run", "profile", *parts, "calls"]:
        out.add_column(c, justify="left" if c in ("run", "profile", "calls") else "right")
    for name, res in rows.items():
        b = res["cost"].get("breakdown", {})
        for profile in ("price", "latency") if b else ():
            total = sum(b[profile].values()) or 1.0
            cells = [f"{b[profile].get(p, 0.0) / total:.3f}" for p in parts]
            calls = " ".join(f"{k}={v}" for k, v in sorted(b["calls"].items()))
            out.add_row(name, profile, *cells, calls)
    return out


def learning_curve(results: Sequence[TurnResult], menu: int, window: int) -> dict[str, list[float]]:
    """Per conversation in replay order: first-pass recall and tokens+menu / eager, rolling."""
    by_conv: dict[str, list[TurnResult]] = {}
    for r in results:
        by_conv.setdefault(r.conv, []).append(r)
    recall = [metrics(rs, menu)["first_pass_recall_turn"] for rs in by_conv.values()]
    tokens = [metrics(rs, menu)["tool_token_ratio_with_menu"] for rs in by_conv.values()]

    def rolling(xs: list[float]) -> list[float]:
        return [
            round(statistics.fmean(xs[max(0, i - window + 1) : i + 1]), 4) for i in range(len(xs))
        ]

    return {
        "past_sessions": list(range(len(recall))),
        "recall": rolling(recall),
        "tokens": rolling(tokens),
    }


def plot_curves(curves: dict[str, dict[str, list[float]]], path: Path) -> None:
    """The learning curves as one PNG: first-pass recall and tool tokens vs past sessions."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    for name, c in curves.items():
        top.plot(c["past_sessions"], c["recall"], label=name)
        bottom.plot(c["past_sessions"], c["tokens"], label=name)
    top.set_ylabel("first-pass recall (turns)")
    bottom.set_ylabel("tool tokens incl. menu / eager")
    bottom.set_xlabel("past sessions in the store")
    top.legend(fontsize=8)
    top.set_title("session bench, online: rolling mean over recent conversations")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _result(
    runs: list[TurnResult], menu: int, settings: dict[str, Any], secs: float
) -> dict[str, Any]:
    m = metrics(runs, menu)
    return {
        "settings": settings,
        "metrics": m,
        "targets": verdict(m),
        "seconds": round(secs, 1),
        "per_turn": [{k: v for k, v in asdict(r).items() if k != "calls"} for r in runs],
    }


def session_costs(
    results: Sequence[TurnResult],
    convs: Sequence[Conversation],
    stores: Stores,
) -> dict[str, Any]:
    """Every replayed session priced beside eager, the oracle and the search peers (peers.py)."""
    calls: dict[str, list[list[list[Any]]]] = {}
    notes: dict[str, list[str]] = {}
    for r in results:
        calls.setdefault(r.conv, []).append(r.calls)
        notes.setdefault(r.conv, []).append(r.note)
    instructions = Settings(db="sqlite://").instructions
    played = [
        peers.play_all(
            c,
            stores.registry_of.get(c.id, stores.registry),
            stores.settings["path"],
            instructions,
            calls[c.id],
            notes[c.id],
        )
        for c in convs
        if c.id in calls
    ]
    out = peers.priced(played)
    if BREAKDOWN:
        kinds = {c: [r.escape_kinds for r in results if r.conv == c] for c in calls}
        out["breakdown"] = breakdown.breakdown(convs, calls, kinds, notes)
    return out


def run_corpus(
    data: Path, corpus: str, folder: Path, opts: argparse.Namespace
) -> tuple[dict[str, Any], dict[str, dict[str, list[float]]]]:
    """Every requested history for one corpus on both paths."""
    registry, names = load_registry(data, corpus)
    convs = load_conversations(data, corpus, names)
    use_searches(data, corpus, names, opts.searches)
    if opts.quick:
        convs = convs[:QUICK_CONVERSATIONS]
    elif opts.sample:
        convs = convs[:: max(1, len(convs) // opts.sample)][: opts.sample]
    past: list[Conversation] = []
    if opts.past:
        preg, pnames = load_registry(opts.past.parent, opts.past.name)
        past = load_conversations(opts.past.parent, opts.past.name, pnames)
    runs: dict[str, Any] = {}
    curves: dict[str, dict[str, list[float]]] = {}
    for path in opts.paths:
        settings = base_settings(path, **opts.overrides)
        (folder / corpus).mkdir(exist_ok=True)
        stores = Stores(folder / corpus, registry, settings, registries(corpus, registry, convs))
        menu = stores.menu_tokens
        histories = (
            ["none"] * (not opts.no_cold) + ["past-split"] * opts.past_split + ["past"] * bool(past)
        )
        histories += ["oracle"] * opts.oracle + ["online"] * opts.online
        for history in histories:
            start = time.perf_counter()
            results = play(history, stores, convs, past, opts.folds)
            key = f"{corpus}/{path}/{history}"
            runs[key] = _result(results, menu, settings, time.perf_counter() - start)
            runs[key]["cost"] = session_costs(results, convs, stores)
            if opts.online and history in ("online", "none"):
                label = "history grows" if history == "online" else "no history"
                curves[f"{corpus}/{path}, {label}"] = learning_curve(results, menu, opts.window)
        if opts.restart:
            runs[f"{corpus}/{path}/restart"] = restart_check(data, corpus, registry, convs, stores)
    return runs, curves


def use_searches(data: Path, corpus: str, names: dict[str, str], shape: str) -> None:
    """The simulated model queries as ``shape`` says from now on (:data:`SEARCHES`; the
    ``--restart`` subprocesses are told ``shape``)."""
    SEARCH_SHAPE[:] = [shape]
    SEARCHES.clear()
    SEARCHES.update(model_searches(data, corpus, names, shape))


def model_searches(data: Path, corpus: str, names: dict[str, str], shape: str) -> SearchMap:
    """Each needed tool's model-written search (the corpus's ``searches.jsonl``, written by
    ``mcp_queries.py``) in ``shape``; ``mixed``: one shape a need, chosen by a hash of the need,
    so each shape is about a quarter of them (a model's habits vary). ``{}`` for ``request``
    or a corpus without searches: the model queries with the user's request. ``written``: the
    search a model wrote for the need having read the bundle menu (``searches.written.jsonl``,
    protocol ``menu``; ``bench/mcp_written.py``)."""
    written = shape == "written"
    path = data / corpus / ("searches.written.jsonl" if written else "searches.jsonl")
    if shape == "request" or not (written or path.is_file()):
        return {}
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return {_need(row, names): row["query"] for row in rows if _written_as(row, shape)}


def _written_as(row: dict[str, Any], shape: str) -> bool:
    """Whether a searches row is the one the model sends for its need under ``shape``."""
    if shape == "written":
        return bool(row["protocol"] == "menu")
    need = f"{row['turn']}:{row['tool']}"
    return bool(
        row["shape"] == (SHAPES[zlib.crc32(need.encode()) % 4] if shape == "mixed" else shape)
    )


def _need(row: dict[str, Any], names: dict[str, str]) -> tuple[str, int, str]:
    """A searches row's need: its conversation, turn number and (catalog) tool name."""
    conv, number = row["turn"].rsplit("_t", 1)
    return conv, int(number), names.get(row["tool"], row["tool"])


def play(
    history: str,
    stores: Stores,
    convs: Sequence[Conversation],
    past: Sequence[Conversation],
    k: int,
) -> list[TurnResult]:
    """Replay ``convs`` under one kind of history (see the module docstring)."""
    if history == "past-split":
        return replay_past_split(stores, convs, k)
    if history == "past":
        return stores.measure_each(convs, stores.with_history(past))
    if history == "online":
        return replay_online(stores, convs)
    if history == "oracle":
        return replay_oracle(stores, convs, k)
    return stores.measure_each(convs, stores.template)


def restart_check(
    data: Path, corpus: str, registry: ToolRegistry, convs: Sequence[Conversation], stores: Stores
) -> dict[str, Any]:
    """Continuous, fresh-trinket-per-turn and subprocess-per-turn replays must agree."""
    base_url = stores.url(stores.copy())
    base = replay_continuous(registry, convs, base_url, stores.settings)
    again = replay_restart(registry, convs, stores.url(stores.copy()), stores.settings)
    sub = replay_subprocess(data, corpus, convs, stores.url(stores.copy()), stores.settings)
    diffs = {"restart": diff(base, again)[:10], "subprocess": diff(base, sub)[:10]}
    return {
        "metrics": metrics(base, stores.menu_tokens),
        "diffs": diffs,
        "restart_equal": not any(diffs.values()),
        "history_recall": history_recall(base_url),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The suite's own flags (shared by bench/run.py and this file)."""
    parser.add_argument("--corpus", action="append", help="corpus folder name (repeatable)")
    parser.add_argument("--past", type=Path, help="a corpus folder replayed as history first")
    parser.add_argument("--past-split", action="store_true", help="history = the other folds")
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--online", action="store_true", help="history grows; learning curve")
    parser.add_argument("--no-cold", action="store_true", help="skip the no-history run")
    parser.add_argument("--oracle", action="store_true", help="oracle co-use companions")
    parser.add_argument("--window", type=int, default=20, help="rolling window of the curve")
    parser.add_argument("--sample", type=int, default=0, help="every n-th conversation")
    parser.add_argument("--path", dest="paths", action="append", choices=PATHS)
    parser.add_argument("--restart", action="store_true", help="check restart equality")
    parser.add_argument("--breakdown", action="store_true", help="price per part (breakdown.py)")
    add_searches(parser, "the model's query for a missing tool")
    parser.add_argument(
        "--reveal",
        choices=("append", "prefix"),
        default=Settings(db="sqlite://").reveal,
        help="where tools loaded after a boundary go (default: the library's)",
    )
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        help="settings override key=JSON (e.g. growth='\"never\"')",
    )


def add_searches(parser: argparse.ArgumentParser, what: str) -> None:
    """``--searches``, shared with ``mcp_search.py``, whose history replays through this model."""
    parser.add_argument(
        "--searches",
        choices=("request", "mixed", *SHAPES, "written"),
        default="request",
        help=f"{what}: the user's request once a turn, or each need's model-written search "
        "(searches.jsonl; mixed = one shape a need; written = a model's, searches.written.jsonl)",
    )


def run_args(data_dir: Path, out_dir: Path, opts: argparse.Namespace) -> dict[str, Any]:
    """The suite with parsed flags: a table per corpus, JSON, and the learning-curve PNG."""
    opts.paths = opts.paths or list(PATHS)
    BREAKDOWN[:] = [True] * bool(getattr(opts, "breakdown", False))
    opts.overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in opts.sets)}
    opts.overrides.setdefault("reveal", opts.reveal)  # --set reveal=... wins
    corpora = opts.corpus or list(CORPORA)
    reveal = opts.overrides["reveal"]
    out: dict[str, Any] = {"corpora": corpora, "reveal": reveal, "targets": TARGETS, "runs": {}}
    curves: dict[str, dict[str, list[float]]] = {}
    console = Console(width=200)
    with tempfile.TemporaryDirectory(prefix="tooltray-session-") as tmp:
        for corpus in corpora:
            runs, c = run_corpus(data_dir, corpus, Path(tmp), opts)
            out["runs"].update(runs)
            curves.update(c)
            measured = {k: v for k, v in runs.items() if "metrics" in v}
            console.print(table(f"session replay: {corpus}", measured))
            console.print(cost_table(f"session cost: {corpus}, reveal = {reveal}", measured))
            if BREAKDOWN:
                console.print(breakdown_table(f"where the price goes: {corpus}", measured))
    if curves:
        out["curves"] = curves
        plot_curves(curves, out_dir / "session_learning.png")
    (out_dir / "session.json").write_text(json.dumps(out, indent=2) + "\n", "utf-8")
    return out


def run(data_dir: Path, out_dir: Path, *, quick: bool = False) -> dict[str, Any]:
    """Default run (both dev corpora, both paths, no history); see :func:`run_args`."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    opts = parser.parse_args([])
    opts.quick = quick
    return run_args(data_dir, out_dir, opts)


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone entry (same flags as bench/run.py), plus ``--worker`` for subprocess turns."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=HERE.parent / "out")
    parser.add_argument("--quick", action="store_true")
    add_arguments(parser)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--turn", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--convs", help=argparse.SUPPRESS)
    parser.add_argument("--settings", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        corpus = (args.corpus or [CORPORA[0]])[0]
        SEARCH_SHAPE[:] = [args.searches]
        worker(
            args.data, corpus, args.db, args.turn, json.loads(args.convs), json.loads(args.settings)
        )
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    run_args(args.data, args.out, args)
    print(f"wrote {args.out / 'session.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
