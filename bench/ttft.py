"""Bench suite ``ttft``: real first-token latency of a real local model, eager vs selected tools.

Measures with gemma-3-270m on llama-cpp-python (2 threads), on the bfcl_multiturn catalog
(130 tools), text path (tools rendered one line each in the prompt):

a. first turn, cold cache: all 130 tools in the system prompt (eager) vs a small subset;
b. turns 2..4, warm cache as it naturally happens: a stable tool block at the head (eager or
   subset) vs a block re-selected every turn, either at the head (before the history: each
   change re-prefills everything after it, the "cache-thrash trap") or at the tail (just before
   the current user message: only the tail is re-prefilled).

Run: ``python bench/ttft.py [--quick] [--n N] [--data-dir DIR] [--out-dir DIR]``; writes
``ttft.json``. Without the model packages it prints ``ttft: skipped: <reason>``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    from .llm_server import LocalModel, available, break_cache, measure_ttft
except ImportError:  # run as a script: python bench/ttft.py
    from llm_server import LocalModel, available, break_cache, measure_ttft

Tool = dict[str, Any]
Selector = Callable[[str], list[Tool]]
MODEL = "gemma-3-270m"
SUBSET_SIZE = 12
LATER_TURNS = 3  # turns 2..4
SCENARIOS = ("eager", "stable", "reselect_head", "reselect_tail")
INSTRUCTIONS = (
    "You are an assistant that completes the user's request by calling tools. "
    "To call a tool, reply with one line per call: name(arg=value, ...). "
    "Call only tools from the list; if none fits, say so in one sentence."
)
REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Turn:
    """One user turn of a conversation and the tools its reference solution called."""

    query: str
    gold: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    """A bfcl_multiturn conversation: its id and its user turns in order."""

    id: str
    turns: tuple[Turn, ...]


def corpus_dir(data_dir: Path) -> Path:
    """Accept either the data root (holding ``bfcl_multiturn/``) or the corpus folder itself."""
    return data_dir if (data_dir / "tools.jsonl").exists() else data_dir / "bfcl_multiturn"


def load_catalog(corpus: Path) -> list[Tool]:
    """The tool catalog, one JSON object a line, in file order."""
    with (corpus / "tools.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_conversations(corpus: Path) -> list[Conversation]:
    """Conversations whose turns t0..t3 are all labelled, ordered by conversation number."""
    turns: dict[str, dict[int, Turn]] = {}
    with (corpus / "queries.dev.jsonl").open(encoding="utf-8") as fh:
        for line in filter(str.strip, fh):
            row = json.loads(line)
            conv, index = row["id"].rsplit("_t", 1)
            turns.setdefault(conv, {})[int(index)] = Turn(row["query"], tuple(row["gold"]))
    needed = range(LATER_TURNS + 1)
    full = [c for c, ts in turns.items() if all(i in ts for i in needed)]
    full.sort(key=lambda c: int(c.rsplit("_", 1)[1]))
    return [Conversation(c, tuple(turns[c][i] for i in needed)) for c in full]


def spread(items: Sequence[Conversation], n: int) -> list[Conversation]:
    """`n` items evenly spaced over `items` (deterministic, covers several tool groups)."""
    if n >= len(items):
        return list(items)
    step = (len(items) - 1) / max(n - 1, 1)
    return [items[round(i * step)] for i in range(n)]


def _tool_sentence(description: str) -> str:
    # bfcl descriptions open with a class-wide preamble; the tool's own text follows this marker.
    own = description.split("Tool description:", 1)[-1]
    text = " ".join(own.split())
    end = next(
        (i + 1 for i, ch in enumerate(text) if ch in ".!?" and text[i + 1 : i + 2] in " "), 0
    )
    return text[:end] if end else text


def render_tools(tools: Sequence[Mapping[str, Any]]) -> str:
    """One line per tool, ``name(arg, optional?) - first sentence``: the text path's tool block."""
    lines = []
    for tool in tools:
        schema = tool.get("parameters") or {}
        required = set(schema.get("required", []))
        args = [a if a in required else f"{a}?" for a in schema.get("properties", {})]
        lines.append(f"{tool['name']}({', '.join(args)}) - {_tool_sentence(tool['description'])}")
    return "\n".join(lines)


def prompt_for(
    tools_text: str,
    instructions: str,
    history: Sequence[Mapping[str, Any]],
    *,
    tools_last: bool = False,
) -> list[dict[str, Any]]:
    """Chat messages for one turn: instructions, tool block, then the history.

    `history` ends with the current user message. With ``tools_last`` the tool block moves from
    the system prompt to just before that message, so earlier turns stay a byte-stable prefix
    even when the block changes. Swap in tooltray's renderer by passing its text as `tools_text`.
    """
    block = f"Available tools:\n{tools_text}"
    messages = [dict(m) for m in history]
    if not tools_last:
        return [{"role": "system", "content": f"{instructions}\n\n{block}"}, *messages]
    last = messages[-1]
    messages[-1] = {**last, "content": f"{block}\n\n{last['content']}"}
    return [{"role": "system", "content": instructions}, *messages]


def history_until(conv: Conversation, k: int) -> list[dict[str, str]]:
    """User turns 0..k with a short synthetic assistant reply after each earlier one."""
    history: list[dict[str, str]] = []
    for turn in conv.turns[:k]:
        history.append({"role": "user", "content": turn.query})
        history.append({"role": "assistant", "content": f"Done: called {', '.join(turn.gold)}."})
    history.append({"role": "user", "content": conv.turns[k].query})
    return history


def placeholder_select(catalog: Sequence[Tool], conversations: Sequence[Conversation]) -> Selector:
    """PLACEHOLDER, to be replaced by tooltray's trinket: an oracle on the dev labels.

    For a labelled query: its gold tools, then the rest of their group in catalog order,
    `SUBSET_SIZE` in all (for turn 1, about "the first 12 tools of the gold group"). Unknown
    queries get the first `SUBSET_SIZE` tools. It only sizes the prompt; it measures no recall.
    """
    gold = {t.query: t.gold for c in conversations for t in c.turns}
    by_name = {t["name"]: t for t in catalog}

    def select(query: str) -> list[Tool]:
        names = list(gold.get(query, ()))
        groups = {by_name[n]["group"] for n in names if n in by_name}
        names += [t["name"] for t in catalog if t["group"] in groups and t["name"] not in names]
        picked = [by_name[n] for n in names if n in by_name][:SUBSET_SIZE]
        return picked or list(catalog[:SUBSET_SIZE])

    return select


def tooltray_select(catalog: Sequence[Tool], max_tools: int = 16) -> Selector:
    """tooltray's selection: the hybrid index's picks (bar + bundle-mates) for the query."""
    from tooltray.memory.embedders import default_embedder
    from tooltray.memory.retrieval import ToolIndex
    from tooltray.tools.spec import ToolSpec

    specs = [
        ToolSpec(
            name=t["name"],
            description=t.get("description", ""),
            parameters=t.get("parameters") or {},
            bundle=t.get("group"),
        )
        for t in catalog
    ]
    index = ToolIndex(specs, default_embedder())
    by_name = {t["name"]: t for t in catalog}

    def select(query: str) -> list[Tool]:
        return [by_name[h.name] for h in index.picks(query, max_tools)]

    select.__name__ = "tooltray_select"
    return select


def scenario_messages(
    scenario: str, conv: Conversation, k: int, catalog: Sequence[Tool], select: Selector
) -> list[dict[str, Any]]:
    """The messages a scenario sends at turn `k` (0-based) of `conv`."""
    history = history_until(conv, k)
    if scenario == "eager":
        return prompt_for(render_tools(catalog), INSTRUCTIONS, history)
    if scenario == "stable":
        return prompt_for(render_tools(select(conv.turns[0].query)), INSTRUCTIONS, history)
    block = render_tools(select(conv.turns[k].query))
    return prompt_for(block, INSTRUCTIONS, history, tools_last=scenario == "reselect_tail")


def _tokens(model: LocalModel, base_url: str, messages: list[dict[str, Any]]) -> list[int]:
    import urllib.request

    body = json.dumps({"input": model.render(messages)}).encode()
    url = f"{base_url.removesuffix('/v1')}/extras/tokenize"
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return list(json.load(resp)["tokens"])


def common_tokens(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens two prompts share (what a KV cache can re-use)."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def measure_conversation(
    model: LocalModel, base_url: str, conv: Conversation, catalog: Sequence[Tool], select: Selector
) -> dict[str, list[dict[str, Any]]]:
    """Each scenario over turns 1..4 of `conv`: turn 1 cold, later turns warm as they come."""
    out: dict[str, list[dict[str, Any]]] = {}
    for scenario in SCENARIOS:
        rows, previous = [], None
        for k in range(LATER_TURNS + 1):
            messages = scenario_messages(scenario, conv, k, catalog, select)
            tokens = _tokens(model, base_url, messages)
            prefill = len(tokens) - (common_tokens(previous, tokens) if previous else 0)
            seconds = measure_ttft(base_url, messages, cold=k == 0, model=model.name)
            rows.append(
                {
                    "turn": k + 1,
                    "ttft_s": seconds,
                    "prompt_tokens": len(tokens),
                    "prefill_tokens": prefill,
                }
            )
            previous = tokens
        out[scenario] = rows
    return out


def _median(values: Sequence[float]) -> float:
    return round(statistics.median(values), 4) if values else float("nan")


def summarize(per_conv: Mapping[str, Mapping[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """Medians over conversations: first turn (eager vs subset) and each later turn."""

    def column(scenario: str, turn: int, key: str) -> list[float]:
        return [rows[scenario][turn - 1][key] for rows in per_conv.values()]

    first: dict[str, Any] = {
        name: {
            "median_s": _median(column(s, 1, "ttft_s")),
            "prompt_tokens": _median(column(s, 1, "prompt_tokens")),
        }
        for name, s in (("eager", "eager"), ("subset", "stable"))
    }
    first["speedup"] = round(first["eager"]["median_s"] / first["subset"]["median_s"], 2)
    later: dict[str, Any] = {}
    for s in SCENARIOS:
        turns = range(2, LATER_TURNS + 2)
        later[s] = {f"turn_{t}_s": _median(column(s, t, "ttft_s")) for t in turns}
        later[s]["median_s"] = _median([v for t in turns for v in column(s, t, "ttft_s")])
        later[s]["prefill_tokens"] = _median(
            [v for t in turns for v in column(s, t, "prefill_tokens")]
        )
    return {"first_turn": first, "later_turns": later}


def print_table(result: Mapping[str, Any]) -> None:
    """Human-readable summary of `run`'s result."""
    first, later = result["first_turn"], result["later_turns"]
    print(
        f"ttft: {result['model']}, {result['n_conversations']} conversations, "
        f"{result['n_tools']} tools, subset {SUBSET_SIZE} ({result['selector']})"
    )
    print(f"  {'first turn, cold':<24}{'median s':>10}{'prompt tok':>12}")
    for name in ("eager", "subset"):
        row = first[name]
        print(f"  {name:<24}{row['median_s']:>10.3f}{row['prompt_tokens']:>12.0f}")
    print(f"  {'eager / subset':<24}{first['speedup']:>9.2f}x")
    heads = [f"turn {t}" for t in range(2, LATER_TURNS + 2)] + ["median", "prefill tok"]
    print(f"  {'later turns, warm (s)':<24}" + "".join(f"{h:>12}" for h in heads))
    for s, row in later.items():
        cells = [row[f"turn_{t}_s"] for t in range(2, LATER_TURNS + 2)] + [row["median_s"]]
        print(
            f"  {s:<24}" + "".join(f"{v:>12.3f}" for v in cells) + f"{row['prefill_tokens']:>12.0f}"
        )


def run(
    data_dir: Path,
    out_dir: Path,
    *,
    quick: bool = False,
    n: int | None = None,
    select: Selector | None = None,
    model: str = MODEL,
) -> dict[str, Any]:
    """Run the suite; return a JSON-able dict (also written to ``out_dir/ttft.json``).

    `select(query) -> list of tool dicts` picks the subset; default `tooltray_select`
    (`placeholder_select` is an oracle on the dev labels, kept for comparison).
    """
    ok, why = available(model)
    if not ok:
        print(f"ttft: skipped: {why}")
        return {"skipped": why}
    corpus = corpus_dir(Path(data_dir))
    catalog = load_catalog(corpus)
    convs = spread(load_conversations(corpus), n or (2 if quick else 5))
    chooser = select or tooltray_select(catalog)
    started = time.perf_counter()
    lm = LocalModel(model)
    with lm as base_url:
        break_cache(base_url, model)  # warm-up: first request pays one-off page-in costs
        per_conv = {c.id: measure_conversation(lm, base_url, c, catalog, chooser) for c in convs}
    result: dict[str, Any] = {
        "suite": "ttft",
        "model": model,
        "n_tools": len(catalog),
        "n_conversations": len(convs),
        "selector": getattr(chooser, "__name__", "custom"),
        **summarize(per_conv),
        "conversations": per_conv,
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "ttft.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print_table(result)
    return result


def main(argv: Sequence[str] | None = None) -> None:
    """Standalone entry point: ``python bench/ttft.py [--quick]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--out-dir", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--quick", action="store_true", help="2 conversations instead of 5")
    parser.add_argument("--n", type=int, default=None, help="number of conversations")
    parser.add_argument("--model", default=MODEL)
    args = parser.parse_args(argv)
    run(args.data_dir, args.out_dir, quick=args.quick, n=args.n, model=args.model)


if __name__ == "__main__":
    main()
