"""Suite ``gateway_follow``: selection over MCP from the tools a gateway session calls (issue 35).

A gateway session sees no user text unless a client passes it (a hint). This replays each
conversation of a corpus as the gateway drives the trinket (``memory/gateway/gateway.py``): one
turn per forwarded call, the corpus's gold tools called in order, each call reported as
``tool-used`` then ``turn-completed``; optionally each turn's user text as a hint (a new turn
whose selection runs as ``prepare`` would), and optionally ``trinket.follow`` after each call
(the called tool's learned companions and its text as evidence). Four modes:

- ``bare``: no text, no follow (what a gateway session was before issue 35: CORE and escapes);
- ``follow``: no text, each call followed;
- ``hint``: each turn's text as a hint, no follow;
- ``hint+follow``: both.

Per mode: *listed before its call*, the share of calls whose tool was loaded before the call
(the rest are escapes: an unlisted call the gateway runs and loads); *tools listed*, the mean
loaded set at a call; *listed tokens*, the mean tokens of that set (native schemas, o200k),
against the catalog's eager tokens. Each mode has its own store, empty at the start, and each
conversation learns from those before it, as a deployment does; ``--past-split``: the even
conversations are played first (teaching), then the odd ones measured; ``--learn off``: no
history at all.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpora import Conversation, load_conversations, load_registry  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from session import base_settings, open_trinket  # noqa: E402

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed  # noqa: E402
from tooltray.memory.core.trinket import ToolLoaderTrinket  # noqa: E402
from tooltray.memory.gateway.hints import Conversations  # noqa: E402

MODES = {"bare": (False, False), "follow": (False, True), "hint": (True, False)}
MODES["hint+follow"] = (True, True)
GATEWAY = {"activation_share": 0.0, "opening": "share", "reveal": "prefix"}  # as Gateway sets
GATEWAY["generic"] = "detect"  # the gateway's default (Settings' is "off")


class Replay:
    """One conversation driven as the gateway drives the trinket."""

    def __init__(self, trinket: ToolLoaderTrinket, sid: str, hints: bool, follow: bool) -> None:
        self.trinket, self.sid, self.hints, self.follow = trinket, sid, hints, follow
        self.said = Conversations()
        self.turn = trinket.prepare(sid, ()).turn
        self.calls: list[tuple[bool, int, int]] = []  # (listed before, tools, tokens)

    def play(self, conv: Conversation) -> None:
        for turn in conv.turns:
            if self.hints:
                messages = self.said.add(self.sid, self.turn + 1, turn.query)
                self.turn = self.trinket.prepare(self.sid, messages).turn
            for tool in turn.gold:
                self.call(tool)

    def call(self, tool: str) -> None:
        loaded = self.trinket.loaded(self.sid)
        tokens = self.trinket.catalog.prepared().tokens
        self.calls.append((tool in loaded, len(loaded), sum(tokens.get(n, 0) for n in loaded)))
        emit(tool_used, self.sid, ToolUsed(tool=tool, turn=self.turn, ok=True))
        self.turn += 1
        emit(turn_completed, self.sid, TurnCompleted(turn=self.turn))
        if self.follow:
            self.trinket.follow(self.sid, [tool])


def measure(
    data: Path, corpus: str, past_split: bool, sample: int, learn: str = "on"
) -> dict[str, Any]:
    """Every mode over ``corpus``'s conversations (about ``sample`` of them when given)."""
    registry, names = load_registry(data, corpus)
    convs = load_conversations(data, corpus, names)
    convs = convs[:: max(1, len(convs) // sample)] if sample else convs
    taught, measured = (convs[::2], convs[1::2]) if past_split else ([], convs)
    out: dict[str, Any] = {"conversations": len(measured), "taught": len(taught)}
    with tempfile.TemporaryDirectory(prefix="tooltray-gw-follow-") as tmp:
        for mode, (hints, follow) in MODES.items():
            url = f"sqlite:///{tmp}/{mode.replace('+', '_')}.db"
            settings = base_settings("openai", **GATEWAY, learn=learn)
            with open_trinket(registry, url, settings) as trinket:
                for i, conv in enumerate(taught):
                    Replay(trinket, f"past-{i}", hints, follow).play(conv)
                calls = []
                for i, conv in enumerate(measured):
                    replay = Replay(trinket, f"s-{i}", hints, follow)
                    replay.play(conv)
                    calls += replay.calls
                out["eager"] = trinket.catalog.eager_tokens()
            out[mode] = _summary(calls)
    return out


def _summary(calls: list[tuple[bool, int, int]]) -> dict[str, float]:
    n = max(1, len(calls))
    return {
        "calls": len(calls),
        "listed_before": round(sum(c[0] for c in calls) / n, 3),
        "tools": round(sum(c[1] for c in calls) / n, 1),
        "tokens": round(sum(c[2] for c in calls) / n),
    }


def _table(results: dict[str, Any]) -> Table:
    table = Table(title="gateway_follow: gold tools listed before their call, gateway sessions")
    for col in ("run", "mode", "calls", "listed before call", "tools listed", "tokens listed"):
        table.add_column(col, justify="left" if col in ("run", "mode") else "right")
    for run, r in results.items():
        for mode in MODES:
            m = r[mode]
            share = f"{m['tokens'] / max(1, r['eager']):.3f} of eager"
            cells = [str(m["calls"]), f"{m['listed_before']:.3f}", f"{m['tools']:.1f}"]
            table.add_row(run, mode, *cells, f"{m['tokens']:,} ({share})")
    return table


def run_args(data_dir: Path, out_dir: Path, opts: argparse.Namespace) -> dict[str, Any]:
    """Entry point for ``bench/run.py`` with this suite's flags."""
    results = {}
    for corpus in opts.corpus or ["mcp20"]:
        split = "past-split" if opts.past_split else "learning" if opts.learn == "on" else "none"
        run = measure(data_dir, corpus, opts.past_split, opts.sample, opts.learn)
        results[f"{corpus}/{split}"] = run
    Console(width=150).print(_table(results))
    return {"runs": results}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This suite's flags, for ``bench/run.py``."""
    parser.add_argument("--corpus", action="append", help="corpus folder name (repeatable)")
    parser.add_argument("--past-split", action="store_true", help="odd half, even half as history")
    parser.add_argument("--sample", type=int, default=0, help="about this many conversations")
    parser.add_argument("--learn", choices=("on", "off"), default="on", help="off: no history")
