"""Suite ``session``: replay multi-turn conversations through the real trinket, store and embedder.

``python bench/run.py session [--data DIR] [--out DIR] [--quick]`` (or ``python bench/session.py``
with the same flags). For every conversation of ``bfcl_multiturn/queries.dev.jsonl`` (ids
``multi_turn_base_<conv>_t<turn>``; ``gold`` = the tools called in that turn) and for the demo
script, turn by turn:

1. ``view = trinket.prepare(session, messages)`` (earlier user messages with assistant
   placeholders, then the current one): *first-pass recall* = every gold tool is in the view;
2. a simulated model calls each gold tool. Native path (``openai``): a tool not offered makes
   it call ``load_tools`` with the name (an escape), then the agent prepares again. Text path:
   the unlisted call simply runs (the registry is whole) and the trinket auto-loads it (an
   escape). *Recall after recovery* = every gold tool was callable when it was called. Each call
   emits ``tool-used``, then ``turn-completed`` closes the turn; the agent prepares again after
   every call (a real loop calls ``prepare`` before every model request);
3. tool tokens of the turn's first view against eager, and the prefix hash at the turn's start.

``--restart`` variants must give identical per-turn results: a brand-new Store + trinket for
every turn over the same file (all conversations), and one subprocess per turn index that runs
that turn of every conversation (``--subprocess-sample`` conversations; all by default).
The recall is cross-checked against ``tooltray eval recall``'s reading of the stored history.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed
from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.eval.recall import evaluate_store
from tooltray.memory.metatools.specs import LOAD_TOOLS, META_TOOL_NAMES
from tooltray.memory.store import Store
from tooltray.tools.demo import demo_registry, demo_script
from tooltray.tools.importers.catalog import read_catalog
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import NATIVE_PATHS
from tooltray.tools.tokens import count_tokens

HERE = Path(__file__).resolve()
DEFAULT_DATA = HERE.parents[2] / "shared" / "data"
CORPUS = "bfcl_multiturn"
PATHS = ("openai", "text")
PLACEHOLDER = "(done)"
TARGETS = {
    "recall_after_recovery": 1.0,
    "first_pass_recall": 0.95,
    "escape_rate_per_turn": 0.1,
    "tool_token_ratio": 0.10,
    "prefix_changes_per_session": 1.0,
}


@dataclass(frozen=True)
class Conversation:
    """One conversation: its id and, per turn, the user message and the gold tool names."""

    id: str
    turns: tuple[tuple[str, tuple[str, ...]], ...]


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


# ----- data ----------------------------------------------------------------------------------


def bfcl_registry(data: Path) -> tuple[ToolRegistry, dict[str, str]]:
    """The bfcl_multiturn registry (group = bundle) and original -> registered names."""
    path = data / CORPUS / "tools.jsonl"
    catalog = read_catalog(path, sanitize=True, source=CORPUS)
    back = {orig: new for new, orig in catalog.renamed.items()}
    return ToolRegistry.from_catalog(path, sanitize=True), back


def load_conversations(data: Path, names: dict[str, str] | None = None) -> list[Conversation]:
    """The dev conversations in id order, turns in order (gold names mapped to registered ones)."""
    names = names or {}
    by_conv: dict[str, dict[int, tuple[str, tuple[str, ...]]]] = {}
    for line in (data / CORPUS / "queries.dev.jsonl").read_text("utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        conv, turn = row["id"].rsplit("_t", 1)
        gold = tuple(names.get(g, g) for g in row["gold"])
        by_conv.setdefault(conv, {})[int(turn)] = (row["query"], gold)
    out = []
    for conv in sorted(by_conv, key=lambda c: int(c.rsplit("_", 1)[1])):
        turns = by_conv[conv]
        if sorted(turns) != list(range(len(turns))):
            raise ValueError(f"{conv}: turns {sorted(turns)} are not contiguous from 0")
        out.append(Conversation(conv, tuple(turns[k] for k in range(len(turns)))))
    return out


def demo_conversation() -> Conversation:
    """The demo script as one conversation; meta-tool calls are dropped from gold (the
    simulated model recovers with ``load_tools`` by name, like on every other turn)."""
    turns = []
    for t in demo_script():
        gold = tuple(c["name"] for c in t["calls"] if c["name"] not in META_TOOL_NAMES)
        turns.append((str(t["user"]), gold))
    return Conversation("demo", tuple(turns))


def messages_for(conv: Conversation, index: int) -> list[dict[str, str]]:
    """Earlier user messages with assistant placeholders, then the current user message."""
    out: list[dict[str, str]] = []
    for query, _ in conv.turns[:index]:
        out += [{"role": "user", "content": query}, {"role": "assistant", "content": PLACEHOLDER}]
    out.append({"role": "user", "content": conv.turns[index][0]})
    return out


# ----- one turn ------------------------------------------------------------------------------


def run_turn(
    trinket: ToolLoaderTrinket, session_id: str, conv: Conversation, index: int
) -> TurnResult:
    """Replay turn ``index`` of ``conv`` as session ``session_id`` (see the module docstring)."""
    messages = messages_for(conv, index)
    gold = list(conv.turns[index][1])
    view = trinket.prepare(session_id, messages)
    start = view
    prefixes = [view.prefix_hash]
    native = trinket.settings.path in NATIVE_PATHS
    escapes, not_callable = 0, []
    for tool in gold:
        if tool not in view.loaded:
            escapes += 1
            if native:
                trinket.handle_meta(session_id, LOAD_TOOLS, {"tools": [tool]})
                view = trinket.prepare(session_id, messages)
                prefixes.append(view.prefix_hash)
        callable_ = tool in view.loaded if native else trinket.registry.is_allowed(tool)
        if not callable_:
            not_callable.append(tool)
        emit(tool_used, session_id, ToolUsed(tool=tool, turn=view.turn))
        view = trinket.prepare(session_id, messages)
        prefixes.append(view.prefix_hash)
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
    )


@contextmanager
def open_trinket(
    registry: ToolRegistry, url: str, settings: dict[str, Any]
) -> Iterator[ToolLoaderTrinket]:
    """A trinket over a new Store on ``url``; closed (signals and pool) on exit."""
    store = Store(url)
    trinket = ToolLoaderTrinket(registry, store, settings=Settings(db=url, **settings))
    try:
        yield trinket
    finally:
        trinket.close()
        store.close()


def sid_for(conv: Conversation, path: str) -> str:
    """One session per conversation and path."""
    return f"{conv.id}@{path}"


def replay_continuous(
    registry: ToolRegistry, convs: Sequence[Conversation], url: str, settings: dict[str, Any]
) -> list[TurnResult]:
    """One trinket over one store for every conversation."""
    out = []
    with open_trinket(registry, url, settings) as trinket:
        for conv in convs:
            sid = sid_for(conv, trinket.settings.path)
            out += [run_turn(trinket, sid, conv, k) for k in range(len(conv.turns))]
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
    data: Path, convs: Sequence[Conversation], url: str, settings: dict[str, Any]
) -> list[TurnResult]:
    """One fresh Python process per turn index, each playing that turn of every conversation."""
    out: list[TurnResult] = []
    ids = [c.id for c in convs]
    for k in range(max(len(c.turns) for c in convs)):
        args = [sys.executable, str(HERE), "--worker", "--db", url, "--data", str(data)]
        args += ["--turn", str(k), "--settings", json.dumps(settings), "--convs", ",".join(ids)]
        done = subprocess.run(args, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"worker for turn {k} failed:\n{done.stderr[-3000:]}")
        out += [TurnResult(**json.loads(line)) for line in done.stdout.splitlines() if line]
    order = {(c.id, k): i for i, c in enumerate(convs) for k in range(len(c.turns))}
    return sorted(out, key=lambda r: order[(r.conv, r.index)])


def worker(data: Path, url: str, turn: int, convs: list[str], settings: dict[str, Any]) -> None:
    """Subprocess entry: play turn ``turn`` of the named conversations, print JSON lines."""
    if convs == ["demo"]:
        registry, chosen = demo_registry(), [demo_conversation()]
    else:
        registry, names = bfcl_registry(data)
        wanted = set(convs)
        chosen = [c for c in load_conversations(data, names) if c.id in wanted]
    with open_trinket(registry, url, settings) as trinket:
        for conv in chosen:
            if turn < len(conv.turns):
                result = run_turn(trinket, sid_for(conv, trinket.settings.path), conv, turn)
                print(json.dumps(asdict(result)), flush=True)


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
        "tool_tokens_mean": round(statistics.fmean(r.tool_tokens for r in results), 1),
        "eager_tokens": results[0].eager_tokens if results else 0,
        "tool_token_ratio": _mean(ratios),
        "tool_token_ratio_with_menu": _mean(menu_ratios),
        "menu_tokens": menu_tokens,
        "loaded_start_mean": round(statistics.fmean(len(r.loaded_start) for r in results), 1),
        "prefix_changes_per_session": _mean(changes),
        "prefix_changes_max": max(changes, default=0),
        "prefix_changes_incl_midturn_per_session": _mean(midturn_changes(results)),
    }


def verdict(m: dict[str, Any]) -> dict[str, bool]:
    """Which targets (reported, not asserted) the metrics meet."""
    return {
        "recall_after_recovery = 100%": m["recall_after_recovery_turn"] >= 1.0,
        "first_pass_recall >= 95%": m["first_pass_recall_turn"] >= TARGETS["first_pass_recall"],
        "escape_rate <= 0.1/turn": m["escape_rate_per_turn"] <= TARGETS["escape_rate_per_turn"],
        "tool tokens <= 10% of eager": m["tool_token_ratio"] <= TARGETS["tool_token_ratio"],
        "<= 1 prefix change/session": m["prefix_changes_per_session"]
        <= TARGETS["prefix_changes_per_session"],
    }


def history_recall(url: str) -> dict[str, Any]:
    """``tooltray eval recall``'s reading of the stored history (cross-check)."""
    with Store(url) as store:
        return evaluate_store(store).summary()


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
    keys += ["context_window", "activation_share", "query_mode", "embedder"]
    out: dict[str, Any] = {k: getattr(defaults, k) for k in keys}
    out.update(path=path, **extra)
    return out


def _menu_tokens(trinket_registry: ToolRegistry, url: str, settings: dict[str, Any]) -> int:
    if settings["path"] not in NATIVE_PATHS:
        return 0
    with open_trinket(trinket_registry, url, settings) as trinket:
        return count_tokens(trinket.planner.menu()).n


def replay_all(
    data: Path,
    registry: ToolRegistry,
    convs: Sequence[Conversation],
    folder: Path,
    settings: dict[str, Any],
    variants: Mapping[str, Sequence[Conversation]],
) -> dict[str, Any]:
    """Replay ``convs`` continuously, then each restart variant over its conversations (each on
    a fresh file), compare per-turn results, and compute the metrics of the continuous run."""
    runs: dict[str, list[TurnResult]] = {}
    seconds: dict[str, float] = {}
    tag = f"{settings['path']}-{convs[0].id}-{len(list(folder.iterdir()))}"
    url = f"sqlite:///{folder / f'{tag}-continuous.db'}"
    start = time.perf_counter()
    base = replay_continuous(registry, convs, url, settings)
    seconds["continuous"] = round(time.perf_counter() - start, 1)
    equal: dict[str, list[str]] = {}
    for variant, subset in variants.items():
        vurl = f"sqlite:///{folder / f'{tag}-{variant}.db'}"
        start = time.perf_counter()
        if variant == "restart":
            runs[variant] = replay_restart(registry, subset, vurl, settings)
        else:
            runs[variant] = replay_subprocess(data, subset, vurl, settings)
        seconds[variant] = round(time.perf_counter() - start, 1)
        ids = {c.id for c in subset}
        equal[variant] = diff([r for r in base if r.conv in ids], runs[variant])
    m = metrics(base, _menu_tokens(registry, url, settings))
    return {
        "settings": settings,
        "metrics": m,
        "targets": verdict(m),
        "history_recall": history_recall(url),
        "restart_equal": {v: not d for v, d in equal.items()},
        "restart_conversations": {v: len(c) for v, c in variants.items()},
        "restart_diffs": {v: d[:10] for v, d in equal.items() if d},
        "seconds": seconds,
        "per_turn": [asdict(r) for r in base],
    }


def table(title: str, rows: dict[str, dict[str, Any]]) -> Table:
    """One row per run: the headline metrics and restart equality."""
    out = Table(title=title)
    cols = ["run", "turns", "1st-pass turn", "1st-pass tool", "recovered turn", "escapes/turn"]
    cols += ["tokens/eager", "+menu", "prefix chg/sess", "incl mid-turn", "restart =="]
    for c in cols:
        out.add_column(c, justify="left" if c == "run" else "right")
    for name, res in rows.items():
        m = res["metrics"]
        eq = res.get("restart_equal", {})
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
            " ".join(f"{v}:{'yes' if ok else 'NO'}" for v, ok in eq.items()) or "-",
        )
    return out


KNOBS: dict[str, dict[str, Any]] = {
    "default": {},
    "max_tools=24": {"max_tools": 24},
    "max_tools=32,budget=6000": {"max_tools": 32, "token_budget": 6000},
    "max_tools=48,budget=8000": {"max_tools": 48, "token_budget": 8000},
    "growth=never": {"growth": "never"},
    "growth=every_turn": {"growth": "every_turn"},
    "every_turn,max_tools=12,budget=3000": {
        "growth": "every_turn",
        "max_tools": 12,
        "token_budget": 3000,
    },
    "every_turn,max_tools=24,budget=6000": {
        "growth": "every_turn",
        "max_tools": 24,
        "token_budget": 6000,
    },
    "every_turn,max_tools=32,budget=6000": {
        "growth": "every_turn",
        "max_tools": 32,
        "token_budget": 6000,
    },
    "every_turn,max_tools=48,budget=8000": {
        "growth": "every_turn",
        "max_tools": 48,
        "token_budget": 8000,
    },
    "every_turn,32,6000,query=current+previous": {
        "growth": "every_turn",
        "max_tools": 32,
        "token_budget": 6000,
        "query_mode": "current+previous",
    },
    "max_tools=32,6000 + GROWTH_BAR=2.0,STRONG_K=4": {
        "max_tools": 32,
        "token_budget": 6000,
        "retriever": {"GROWTH_BAR": 2.0, "STRONG_K": 4},
    },
}


@contextmanager
def patched_retriever(values: dict[str, Any]) -> Iterator[None]:
    """Temporarily change the retrieval adapter's growth constants (bench-only experiment)."""
    from tooltray.memory import retriever

    old = {k: getattr(retriever, k) for k in values}
    for k, v in values.items():
        setattr(retriever, k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(retriever, k, v)


def knob_table(rows: dict[str, dict[str, Any]]) -> Table:
    """The alternatives tried on the native path: recall, escapes, tokens, prefix stability."""
    out = Table(title="knobs, openai path, continuous replay (bfcl_multiturn | demo script)")
    cols = ("settings", "1st-pass turn", "1st-pass tool", "escapes/turn", "tokens/eager")
    for c in (*cols, "prefix chg/sess", "demo 1st-pass turn", "demo esc/turn", "demo tok/eager"):
        out.add_column(c, justify="left" if c == "settings" else "right")
    for name, row in rows.items():
        m, d = row["bfcl_multiturn"], row["demo"]
        out.add_row(
            name,
            f"{m['first_pass_recall_turn']:.3f}",
            f"{m['first_pass_recall_tool']:.3f}",
            f"{m['escape_rate_per_turn']:.3f}",
            f"{m['tool_token_ratio']:.3f}",
            f"{m['prefix_changes_per_session']:.2f}",
            f"{d['first_pass_recall_turn']:.3f}",
            f"{d['escape_rate_per_turn']:.3f}",
            f"{d['tool_token_ratio']:.3f}",
        )
    return out


def run_knobs(
    registry: ToolRegistry, convs: Sequence[Conversation], folder: Path
) -> dict[str, dict[str, Any]]:
    """Continuous replays on the native path under each alternative setting."""
    out: dict[str, dict[str, Any]] = {}
    demo_reg, demo = demo_registry(), [demo_conversation()]
    for i, (name, knob) in enumerate(KNOBS.items()):
        extra = {k: v for k, v in knob.items() if k != "retriever"}
        settings = base_settings("openai", **extra)
        with patched_retriever(knob.get("retriever", {})):
            bfcl = replay_continuous(registry, convs, f"sqlite:///{folder / f'k{i}.db'}", settings)
            dm = replay_continuous(demo_reg, demo, f"sqlite:///{folder / f'kd{i}.db'}", settings)
        out[name] = {"knob": knob, "bfcl_multiturn": metrics(bfcl), "demo": metrics(dm)}
    return out


def run(
    data_dir: Path,
    out_dir: Path,
    *,
    quick: bool = False,
    restart: bool = True,
    subprocess_sample: int | None = None,
    knobs: bool = True,
) -> dict[str, Any]:
    """The suite: both paths on bfcl_multiturn and the demo script, restart variants, knobs."""
    registry, names = bfcl_registry(data_dir)
    convs = load_conversations(data_dir, names)[: 10 if quick else None]
    sub_convs = convs[:subprocess_sample] if subprocess_sample else convs
    demo = [demo_conversation()]
    results: dict[str, Any] = {"corpus": CORPUS, "conversations": len(convs), "runs": {}}
    console = Console(width=200)
    with tempfile.TemporaryDirectory(prefix="tooltray-session-") as tmp:
        folder = Path(tmp)
        for path in PATHS:
            settings = base_settings(path)
            variants = {"restart": convs, "subprocess": sub_convs} if restart else {}
            results["runs"][f"{CORPUS}/{path}"] = replay_all(
                data_dir, registry, convs, folder, settings, variants
            )
            dvariants = {"restart": demo, "subprocess": demo} if restart else {}
            results["runs"][f"demo/{path}"] = replay_all(
                data_dir, demo_registry(), demo, folder, settings, dvariants
            )
        console.print(table("session replay (targets: see JSON)", results["runs"]))
        if knobs:
            results["knobs"] = run_knobs(registry, convs, folder)
            console.print(knob_table(results["knobs"]))
    results["targets"] = TARGETS
    results["restart_equal"] = all(
        ok for r in results["runs"].values() for ok in r["restart_equal"].values()
    )
    (out_dir / "session.json").write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    if not results["restart_equal"]:
        diffs = {k: r["restart_diffs"] for k, r in results["runs"].items() if r["restart_diffs"]}
        raise AssertionError(f"restart variants differ from the continuous replay: {diffs}")
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone entry (same flags as bench/run.py), plus ``--worker`` for subprocess turns."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=HERE.parent / "out")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-restart", action="store_true", help="skip the restart variants")
    parser.add_argument("--no-knobs", action="store_true", help="skip the knob comparison")
    parser.add_argument("--subprocess-sample", type=int, default=None)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--turn", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--convs", help=argparse.SUPPRESS)
    parser.add_argument("--settings", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.data, args.db, args.turn, args.convs.split(","), json.loads(args.settings))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    run(
        args.data,
        args.out,
        quick=args.quick,
        restart=not args.no_restart,
        subprocess_sample=args.subprocess_sample,
        knobs=not args.no_knobs,
    )
    print(f"wrote {args.out / 'session.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
