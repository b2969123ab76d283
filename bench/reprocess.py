"""Suite ``reprocess``: prompt tokens a real llama.cpp server re-processes per later turn.

Issue 26 asks that on a real local server a later turn re-process no more prompt tokens than its
new messages plus the tools revealed in it. This suite replays multi-turn conversations through
the real trinket on the TEXT path and sends every turn's ``view.messages(history)`` to
llama-cpp-python's server running gemma-3-270m (:mod:`llm_server`), in three modes:

- ``eager``: every tool loaded (``opening="share"``, ``activation_share=1.0``, a huge window);
- ``prefix``: ``reveal="prefix"``, later growth joins the tool block in the system text, so the
  whole conversation after it is re-prefilled;
- ``append``: ``reveal="append"`` (the default), the prefix never changes mid-session and a
  turn's growth is a note woven before its user message.

One request per turn, at its start (``max_tokens=1``, temperature 0); the history grows as in the
session bench: each earlier user message followed by the fixed reply ``(done)``. Escapes
(``load_tools`` mid-turn) are not replayed. Each conversation starts on a broken cache.

What the server re-processed is read from its own log (verbose is the server's default):
``Llama.generate: N prefix-match hit, remaining M prompt tokens to eval`` gives M, ``full prompt
already cached`` gives 0, no such line means a reset (the whole prompt). The ``prompt eval time``
line (llama.cpp's perf counters) is recorded beside it, and so is the token-level diff with the
previous prompt (tokenized by the server), as cross-checks.

tooltray's expectation for a later turn: the gemma tokens of the turn's new messages (the
previous reply and the new user message, counted by the server's ``/extras/tokenize``), plus the
revealed note, plus gemma's per-message frame (``<start_of_turn>role\\n ... <end_of_turn>\\n``,
5 tokens). The o200k counts tooltray uses itself (:func:`tooltray.tools.render.count_tokens`)
are recorded too. Native ``tools=`` do not reach gemma through this server (its chat format
ignores them; checked at every run), so the text path is the only one measured.

Run: ``python bench/run.py reprocess [--quick] [--n N]`` or ``python bench/reprocess.py``;
writes ``reprocess.json``. Without the model packages it prints ``reprocess: skipped: <reason>``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import (  # noqa: E402
    Conversation,
    demo_conversation,
    load_conversations,
    load_registry,
    messages_for,
)
from llm_server import LocalModel, available, break_cache  # noqa: E402
from ttft import common_tokens  # noqa: E402

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed  # noqa: E402
from tooltray.memory.config import Settings  # noqa: E402
from tooltray.memory.core.prompt import (
    PromptView,  # noqa: E402
    note,  # noqa: E402
)
from tooltray.memory.core.trinket import ToolLoaderTrinket  # noqa: E402
from tooltray.memory.store import Store  # noqa: E402
from tooltray.tools.registry import ToolRegistry  # noqa: E402
from tooltray.tools.render import (
    count_tokens,  # noqa: E402
    render_native,  # noqa: E402
)

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
MODEL = "gemma-3-270m"
MODES = ("eager", "prefix", "append")
CONTEXT_WINDOW = 8192  # as the session bench: small catalogs are not loaded whole
MODE_SETTINGS: dict[str, dict[str, Any]] = {
    "eager": {"opening": "share", "activation_share": 1.0, "context_window": 1_000_000},
    "prefix": {"reveal": "prefix", "context_window": CONTEXT_WINDOW, "cost_profile": "price"},
    "append": {"reveal": "append", "context_window": CONTEXT_WINDOW, "cost_profile": "price"},
}
"""Growth and reveals are what this suite measures, so both modes open as the price profile
does: the latency profile (the default) loads the demo catalog whole on the text path (4,498
tokens against an opening that holds little of a session), and nothing would be revealed."""
FRAME_TOKENS = 5  # gemma: <start_of_turn> role \n ... <end_of_turn> \n around each message
SLACK_TOKENS = 2  # token merges where a note meets its message, or a message meets the frame
GENERATE = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")
FULL_CACHE = "Llama.generate: full prompt already cached"
PERF = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")


class ServerLog:
    """The server's combined stdout/stderr file, read from where the last read stopped."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0

    def mark(self) -> None:
        """Skip everything logged so far."""
        self.offset = self.path.stat().st_size

    def new(self) -> str:
        """What was logged since the last `new` or `mark`."""
        with self.path.open("rb") as fh:
            fh.seek(self.offset)
            data = fh.read()
        self.offset += len(data)
        return data.decode("utf-8", errors="replace")


def reprocessed_from_log(text: str, prompt_tokens: int) -> int:
    """Prompt tokens the server evaluated for one request, from that request's log lines."""
    if FULL_CACHE in text:
        return 0
    match = GENERATE.search(text)
    return int(match[2]) if match else prompt_tokens  # no prefix hit: a reset, all of it


def perf_from_log(text: str) -> tuple[float, int]:
    """``(ms, tokens)`` of llama.cpp's ``prompt eval time`` line (``(nan, -1)`` if absent)."""
    match = PERF.search(text)
    return (float(match[1]), int(match[2])) if match else (float("nan"), -1)


class Server:
    """The running local model: chat requests, its tokenizer and its log."""

    def __init__(self, model: LocalModel, base_url: str) -> None:
        from openai import OpenAI

        assert model.log_path is not None
        self.model = model
        self.base_url = base_url
        self.root = base_url.removesuffix("/v1")
        self.log = ServerLog(model.log_path)
        self.client = OpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=600)
        self._counts: dict[str, int] = {}

    def tokenize(self, text: str) -> list[int]:
        """The server's tokens for `text` (BOS first, as it adds to a prompt)."""
        body = json.dumps({"input": text}).encode()
        req = urllib.request.Request(
            f"{self.root}/extras/tokenize", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=60) as resp:
            return list(json.load(resp)["tokens"])

    def count(self, text: str) -> int:
        """Gemma tokens of `text` alone (BOS not counted)."""
        if not text:
            return 0
        if text not in self._counts:
            self._counts[text] = len(self.tokenize(text)) - 1
        return self._counts[text]

    def fresh(self) -> None:
        """Break the KV cache (see :func:`llm_server.break_cache`) and skip its log lines."""
        break_cache(self.base_url, self.model.name)
        self.log.mark()

    def send(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] = ()
    ) -> dict[str, Any]:
        """One chat request; what the server reports and logs for it."""
        extra: dict[str, Any] = {"tools": list(tools)} if tools else {}
        reply = self.client.chat.completions.create(
            model=self.model.name,
            messages=list(messages),
            max_tokens=1,
            temperature=0,
            **extra,
        )
        prompt = int(reply.usage.prompt_tokens) if reply.usage else -1
        text = self.log.new()
        ms, evaluated = perf_from_log(text)
        return {
            "prompt_tokens": prompt,
            "reprocessed": reprocessed_from_log(text, prompt),
            "prompt_eval_tokens": evaluated,
            "prompt_eval_ms": ms,
        }


def native_tools_check(server: Server, registry: ToolRegistry) -> dict[str, Any]:
    """Whether ``tools=`` reach the model: the same messages with and without five tools."""
    messages = [{"role": "user", "content": "Which tool lists the files here?"}]
    server.fresh()
    without = server.send(messages)["prompt_tokens"]
    server.fresh()
    tools = render_native("openai", registry.allowed()[:5])
    with_tools = server.send(messages, tools)["prompt_tokens"]
    return {
        "prompt_tokens_without_tools": without,
        "prompt_tokens_with_5_tools": with_tools,
        "native_tools_reach_model": with_tools > without,
    }


@dataclass
class Request:
    """One turn's request in one mode, and what the server did with it."""

    conv: str
    mode: str
    turn: int
    prompt_tokens: int
    reprocessed: int
    prompt_eval_tokens: int
    prompt_eval_ms: float
    diff_tokens: int
    new_messages: int
    new_text_tokens: int
    new_text_o200k: int
    note_tokens: int
    note_o200k: int
    revealed: list[str] = field(default_factory=list)
    prefix_changed: bool = False
    expected: int = 0
    meets: bool | None = None  # later turns only: re-processed <= expected + SLACK_TOKENS


def _turn_note(view: PromptView, history: Sequence[Mapping[str, Any]], added: list[str]) -> str:
    """The note that reveals this turn's tools: the view's own (append), or, where growth went
    into the prefix instead (prefix mode), the note append would have shown for the same tools."""
    users = sum(1 for m in history if m.get("role") == "user")
    own = dict(view.notes).get(users, "")
    if own or not added:
        return own
    specs = [s for s in view.text_specs if s.name in set(added)]
    return note(specs, native=False)


def play(
    server: Server, registry: ToolRegistry, conv: Conversation, mode: str, folder: Path
) -> list[Request]:
    """Replay `conv` in `mode` on a fresh store; one request per turn, the cache kept between."""
    url = f"sqlite:///{folder / f'{mode}-{conv.id}.db'}"
    store = Store(url)
    settings = Settings(db=url, path="text", **MODE_SETTINGS[mode])
    trinket = ToolLoaderTrinket(registry, store, settings=settings)
    sid = f"{conv.id}@{mode}"
    rows: list[Request] = []
    before: list[dict[str, Any]] = []
    tokens_before: list[int] = []
    hash_before, loaded_before = "", ()
    server.fresh()
    try:
        for k, turn in enumerate(conv.turns):
            history = messages_for(turn)
            view = trinket.prepare(sid, history)
            sent = view.messages(history)
            got = server.send(sent)
            tokens = server.tokenize(server.model.render(sent))
            grows = history[: len(before)] == before
            new = history[len(before) :] if grows else history
            added = [n for n in view.loaded if n not in loaded_before] if k else []
            turn_note = _turn_note(view, history, added)
            texts = [str(m.get("content") or "").strip() for m in new]
            new_tokens = sum(server.count(t) for t in texts)
            note_tokens = server.count(turn_note + "\n\n") if turn_note else 0
            expected = new_tokens + note_tokens + FRAME_TOKENS * len(new)
            row = Request(
                conv=conv.id,
                mode=mode,
                turn=k + 1,
                prompt_tokens=got["prompt_tokens"],
                reprocessed=got["reprocessed"],
                prompt_eval_tokens=got["prompt_eval_tokens"],
                prompt_eval_ms=got["prompt_eval_ms"],
                diff_tokens=len(tokens) - common_tokens(tokens_before, tokens),  # turn 1: all of it
                new_messages=len(new),
                new_text_tokens=new_tokens,
                new_text_o200k=sum(count_tokens(t).n for t in texts),
                note_tokens=note_tokens,
                note_o200k=count_tokens(turn_note).n if turn_note else 0,
                revealed=added,
                prefix_changed=bool(k) and view.prefix_hash != hash_before,
                expected=expected,
                meets=got["reprocessed"] <= expected + SLACK_TOKENS if k else None,
            )
            rows.append(row)
            for tool in turn.gold:
                if tool in view.loaded:
                    emit(tool_used, sid, ToolUsed(tool=tool, turn=view.turn))
            emit(turn_completed, sid, TurnCompleted(turn=view.turn))
            before, tokens_before = history, tokens
            hash_before, loaded_before = view.prefix_hash, view.loaded
    finally:
        trinket.close()
        store.close()
    return rows


def _median(values: Sequence[float]) -> float:
    return round(float(statistics.median(values)), 1) if values else float("nan")


def summarize(rows: Sequence[Request]) -> dict[str, Any]:
    """Per mode: later turns' re-processing against the expectation, and the totals."""
    out: dict[str, Any] = {}
    for mode in MODES:
        mine = [r for r in rows if r.mode == mode]
        later = [r for r in mine if r.turn > 1]
        revealing = [r for r in later if r.revealed]
        out[mode] = {
            "requests": len(mine),
            "later_turns": len(later),
            "median_reprocessed_later": _median([r.reprocessed for r in later]),
            "mean_reprocessed_later": round(statistics.mean(r.reprocessed for r in later), 1)
            if later
            else float("nan"),
            "median_expected_later": _median([r.expected for r in later]),
            "median_expected_o200k_later": _median(
                [r.new_text_o200k + r.note_o200k for r in later]
            ),
            "median_reprocessed_revealing": _median([r.reprocessed for r in revealing]),
            "median_expected_revealing": _median([r.expected for r in revealing]),
            "turns_revealing": len(revealing),
            "meets_target": f"{sum(bool(r.meets) for r in later)}/{len(later)}",
            "all_meet": all(r.meets for r in later),
            "max_over_expected": max((r.reprocessed - r.expected for r in later), default=0),
            "prefix_changes": sum(r.prefix_changed for r in later),
            "reprocessed_total": sum(r.reprocessed for r in mine),
            "prompt_tokens_total": sum(r.prompt_tokens for r in mine),
            "median_prompt_eval_ms_later": _median([r.prompt_eval_ms for r in later]),
            "log_vs_token_diff_mismatches_later": sum(
                r.reprocessed != r.diff_tokens for r in later
            ),
        }
    return out


def print_table(result: Mapping[str, Any]) -> None:
    """Human-readable summary of `run`'s result."""
    print(
        f"reprocess: {result['model']} on llama-cpp-python, text path, "
        f"{result['n_conversations']} conversations ({', '.join(result['conversations'])}), "
        f"{result['n_later_turns']} later turns per mode"
    )
    heads = ["median re-proc", "median expect", "o200k expect", "meets", "prefix chg"]
    heads += ["re-proc total", "prompt total", "ms/turn"]
    print(f"  {'mode':<8}" + "".join(f"{h:>15}" for h in heads))
    for mode, s in result["modes"].items():
        cells = [
            f"{s['median_reprocessed_later']:.0f}",
            f"{s['median_expected_later']:.0f}",
            f"{s['median_expected_o200k_later']:.0f}",
            s["meets_target"],
            str(s["prefix_changes"]),
            f"{s['reprocessed_total']:,}",
            f"{s['prompt_tokens_total']:,}",
            f"{s['median_prompt_eval_ms_later']:.0f}",
        ]
        print(f"  {mode:<8}" + "".join(f"{c:>15}" for c in cells))
    print(
        "  turns that revealed tools: "
        + ", ".join(
            f"{m} {s['turns_revealing']} (median re-proc {s['median_reprocessed_revealing']:.0f}"
            f" vs expected {s['median_expected_revealing']:.0f})"
            for m, s in result["modes"].items()
            if s["turns_revealing"]
        )
    )
    native = result["native_tools"]
    print(
        f"  native tools= reach the model: {native['native_tools_reach_model']} "
        f"(prompt tokens {native['prompt_tokens_without_tools']} without, "
        f"{native['prompt_tokens_with_5_tools']} with 5 tools)"
    )
    print(f"  append meets the target on every later turn: {result['append_meets_target']}")


def spread(items: Sequence[Conversation], n: int) -> list[Conversation]:
    """`n` items evenly spaced over `items` (deterministic)."""
    if n <= 0:
        return []
    if n >= len(items):
        return list(items)
    step = (len(items) - 1) / max(n - 1, 1)
    return [items[round(i * step)] for i in range(n)]


def run(
    data_dir: Path,
    out_dir: Path,
    *,
    quick: bool = False,
    n: int | None = None,
    model: str = MODEL,
) -> dict[str, Any]:
    """Run the suite; return a JSON-able dict (also written to ``out_dir/reprocess.json``)."""
    ok, why = available(model)
    if not ok:
        print(f"reprocess: skipped: {why}")
        return {"skipped": why}
    data_dir = Path(data_dir)
    demo_registry, _ = load_registry(data_dir, "demo")
    bfcl_registry, names = load_registry(data_dir, "bfcl_multiturn")
    bfcl = load_conversations(data_dir, "bfcl_multiturn", names)
    chosen = [(demo_registry, demo_conversation())]
    chosen += [(bfcl_registry, c) for c in spread(bfcl, n if n is not None else 1 if quick else 4)]
    started = time.perf_counter()
    rows: list[Request] = []
    lm = LocalModel(model)
    with lm as base_url, tempfile.TemporaryDirectory(prefix="tooltray-reprocess-") as tmp:
        server = Server(lm, base_url)
        native = native_tools_check(server, demo_registry)
        for registry, conv in chosen:
            for mode in MODES:
                rows += play(server, registry, conv, mode, Path(tmp))
    modes = summarize(rows)
    result: dict[str, Any] = {
        "suite": "reprocess",
        "model": model,
        "path": "text",
        "n_conversations": len(chosen),
        "conversations": [c.id for _, c in chosen],
        "n_later_turns": modes["append"]["later_turns"],
        "frame_tokens_per_message": FRAME_TOKENS,
        "slack_tokens": SLACK_TOKENS,
        "native_tools": native,
        "append_meets_target": modes["append"]["all_meet"],
        "modes": modes,
        "requests": [asdict(r) for r in rows],
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "reprocess.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print_table(result)
    return result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``bench/run.py reprocess`` flags beyond the common ones."""
    parser.add_argument("--n", type=int, default=None, help="bfcl_multiturn conversations (4)")
    parser.add_argument("--model", default=MODEL)


def run_args(data_dir: Path, out_dir: Path, opts: argparse.Namespace) -> dict[str, Any]:
    """Entry point for ``bench/run.py`` with this suite's flags."""
    return run(data_dir, out_dir, quick=opts.quick, n=opts.n, model=opts.model)


def main(argv: Sequence[str] | None = None) -> None:
    """Standalone entry point: ``python bench/reprocess.py [--quick] [--n N]``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out")
    parser.add_argument("--quick", action="store_true", help="1 bfcl conversation instead of 4")
    add_arguments(parser)
    args = parser.parse_args(argv)
    run_args(args.data, args.out, args)


if __name__ == "__main__":
    main()
