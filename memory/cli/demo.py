"""``tooltray demo``: the main job. A scripted session over the demo catalog, turn by turn.

It runs the real trinket, the local embedder and a SQLite file (by default), plays a scripted
native tool-calling model (it calls ``load_tools`` when a tool it needs is not offered, and
``fallback`` where the script says so), and prints what was loaded and why, what the meta-tools
changed, tool tokens against eager, and whether the prompt prefix changed. Run it again and it
resumes the stored session; ``--fresh`` starts a new one.
"""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed
from tooltray.memory.cli.options import DB_OPTION
from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.store import Store, resolve_url
from tooltray.tools.demo import demo_registry, demo_script, demo_skills_dir

PREFIX = "demo-"
COMPACT_AFTER = 8


def _session_id(store: Store, fresh: bool, turns: int) -> tuple[str, int]:
    demos = [s for s in store.sessions() if s.session_id.startswith(PREFIX)]
    numbers = [
        int(s.session_id[len(PREFIX) :]) for s in demos if s.session_id[len(PREFIX) :].isdigit()
    ]
    last = max(numbers, default=0)
    current = next((s for s in demos if s.session_id == f"{PREFIX}{last}"), None)
    if fresh or current is None or current.turn >= turns:
        return f"{PREFIX}{last + 1}", 0
    return current.session_id, current.turn


def _history(script: list[dict[str, Any]], upto: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for turn in script[:upto]:
        messages.append({"role": "user", "content": turn["user"]})
        messages.append({"role": "assistant", "content": turn.get("assistant", "")})
    return messages


class DemoRun:
    """One invocation of the demo: a trinket, a session, and a table of turns."""

    def __init__(self, trinket: ToolLoaderTrinket, session_id: str, console: Console) -> None:
        self.trinket = trinket
        self.sid = session_id
        self.console = console
        self.table = Table(title=f"session {session_id}", show_lines=True)
        for col in (
            "turn",
            "user",
            "loaded (source score)",
            "model's meta calls",
            "tools",
            "tokens vs eager",
            "prefix",
        ):
            self.table.add_column(col, overflow="fold")

    def turn(self, number: int, step: dict[str, Any], messages: list[dict[str, Any]]) -> None:
        """Play one scripted turn through the trinket, like a native tool-calling model would."""
        before = self.trinket.loaded(self.sid)
        view = self.trinket.prepare(self.sid, messages)
        first_hash, metas = view.prefix_hash, []
        for call in step.get("calls", []):
            name = call["name"]
            if self.trinket.is_meta(name):
                text = self.trinket.handle_meta(self.sid, name, call.get("arguments", {}))
                metas.append(f"{name}() → {text.split(':')[0].lower()}")
            elif name not in {s.name for s in view.specs}:
                text = self.trinket.handle_meta(self.sid, "load_tools", {"tools": [name]})
                metas.append(f"load_tools({name}) → {text.split(':')[0].lower()}")
            view = self.trinket.prepare(self.sid, messages)
            if not self.trinket.is_meta(name):
                self._run(call)
        emit(turn_completed, self.sid, TurnCompleted(turn=number))
        if number == COMPACT_AFTER:
            evicted = self.trinket.compact(self.sid)
            metas.append(f"(agent compacted its context → evicted idle: {len(evicted)} tools)")
        self._row(number, step, before, view, first_hash, metas)

    def _run(self, call: dict[str, Any]) -> None:
        spec = self.trinket.registry.resolve(call["name"])
        fn = self.trinket.registry.executor(spec.name)
        result = str(fn(**call.get("arguments", {}))) if fn else ""
        self.trinket.shorten(self.sid, spec.name, result)
        emit(tool_used, self.sid, ToolUsed(tool=spec.name))

    def _row(
        self,
        number: int,
        step: dict[str, Any],
        before: list[str],
        view: Any,
        first: str,
        metas: list[str],
    ) -> None:
        state = self.trinket.state(self.sid).snapshot
        added = [t for t in state.loaded if t.name not in before]
        shown = "\n".join(
            f"{t.name} ({t.source}{'' if t.score is None else f' {t.score:.1f}'})"
            for t in added[:6]
        )
        more = f"\n+{len(added) - 6} more" if len(added) > 6 else ""
        pct = 100 * view.tool_tokens / max(view.eager_tokens, 1)
        changed = "changed" if view.prefix_hash != self.last_hash else "stable"
        self.last_hash = view.prefix_hash
        self.table.add_row(
            str(number),
            step["user"][:60] + ("…" if len(step["user"]) > 60 else ""),
            (shown + more) or "—",
            "\n".join(metas) or "—",
            str(len(view.specs)),
            f"{view.tool_tokens} / {view.eager_tokens} ({pct:.0f}%)",
            f"{changed} {view.prefix_hash[:8]}"
            + ("" if first == view.prefix_hash else " (mid-turn)"),
        )

    last_hash = ""


def _summary(store: Store, sid: str, console: Console) -> None:
    counts: dict[str, int] = {}
    for event in store.history(sid):
        counts[event.kind] = counts.get(event.kind, 0) + 1
    turns = store.turns(sid)
    table = Table(title=f"history of {sid}")
    table.add_column("event")
    table.add_column("count", justify="right")
    for kind, n in sorted(counts.items()):
        table.add_row(kind, str(n))
    console.print(table)
    changes = len({t.prefix_hash for t in turns})
    console.print(
        f"{len(turns)} turn records, {changes} distinct prompt prefixes. "
        f"Explore: tooltray history {sid} · "
        'tooltray sql "SELECT kind, count(*) FROM history GROUP BY kind"'
    )


@click.command("demo")
@DB_OPTION
@click.option("--fresh", is_flag=True, help="Start a new demo session instead of resuming.")
@click.option("--turns", type=int, default=None, help="Play at most this many turns now.")
def demo(db: str | None, fresh: bool, turns: int | None) -> None:
    """Replay the scripted demo session through the real trinket, embedder and store."""
    console = Console()
    script = demo_script()
    store = Store(resolve_url(db), auto_upgrade=True)
    sid, done = _session_id(store, fresh, len(script))
    settings = Settings(db=str(store.url), skills_dir=demo_skills_dir())
    trinket = ToolLoaderTrinket(demo_registry(), store, settings=settings)
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("embedding the demo catalog", total=None)
        trinket.planner.retriever(
            progress=lambda done_, total: bar.update(task, completed=done_, total=total)
        )
    console.print(
        f"{'resuming' if done else 'starting'} {sid} at turn {done + 1} of {len(script)} "
        f"(store: {store.url})"
    )
    run = DemoRun(trinket, sid, console)
    end = len(script) if turns is None else min(len(script), done + turns)
    for number in range(done + 1, end + 1):
        messages = _history(script, number - 1) + [
            {"role": "user", "content": script[number - 1]["user"]}
        ]
        if number == done + 1 and done:
            trinket.start(sid, messages)
        run.turn(number, script[number - 1], messages)
    console.print(run.table)
    _summary(store, sid, console)
    trinket.close()


COMMANDS = [demo]
