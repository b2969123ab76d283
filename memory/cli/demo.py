"""``tooltray demo``: the main job. A scripted session over the demo catalog, turn by turn.

It runs the real trinket, the local embedder and a SQLite file (by default), plays a scripted
native tool-calling model that sees only the prompt rendered for it (the bundle menu and the
``tools=`` list: when a tool it needs is not offered it calls ``load_tools`` with bundle names or a
query, as a real model could), and prints what was loaded and why, the model's calls, tool tokens
against eager, and whether the prompt prefix changed. It closes with first-pass recall, escapes,
tokens and prefix changes, and a picture of the session. Run it again and it resumes the stored
session where it stopped (a finished one shows its summary); ``--fresh`` starts a new one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from tooltray.memory.cli.console import table_console
from tooltray.memory.cli.options import DB_OPTION
from tooltray.tools.errors import ConfigError

if TYPE_CHECKING:
    from tooltray.memory.store import Store

PREFIX = "demo-"


def completed_turns(store: Store, sid: str) -> int:
    """How many turns of ``sid`` completed, in a row from turn 1.

    A turn's row is written when it is prepared and gets its prompt usage when it completes, so
    a turn cut short (Ctrl-C) has a row without usage; the session's own counter already counts
    it, and a resume from that counter silently skipped it.
    """
    completed = {t.turn for t in store.turns(sid) if t.prompt_new is not None}
    done = 0
    while done + 1 in completed:
        done += 1
    return done


def latest_session(store: Store, fresh: bool) -> tuple[str, int]:
    """The demo session to play and the turns it has completed: the latest one, or a new one."""
    numbers = [
        int(s.session_id[len(PREFIX) :])
        for s in store.sessions()
        if s.session_id.startswith(PREFIX) and s.session_id[len(PREFIX) :].isdigit()
    ]
    last = max(numbers, default=0)
    current = store.snapshot(f"{PREFIX}{last}") if last else None
    if fresh or current is None:
        return f"{PREFIX}{last + 1}", 0
    return current.session_id, completed_turns(store, current.session_id)


def _history(script: list[dict[str, Any]], upto: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for turn in script[:upto]:
        messages.append({"role": "user", "content": turn["user"]})
        messages.append({"role": "assistant", "content": turn.get("assistant", "")})
    return messages


def _report_path(store: Store, sid: str) -> Path:
    """The picture beside a SQLite file, else in the current folder."""
    name = f"tooltray-{sid}.png"
    database = store.engine.url.database
    if store.engine.url.get_backend_name() == "sqlite" and database and database != ":memory:":
        return Path(database).resolve().parent / name
    return Path(name)


def _close(store: Store, sid: str) -> None:
    """The closing summary and the picture (or how to get it)."""
    from tooltray.memory.report import build_timeline, draw_timeline, summarize, summary_lines

    for line in summary_lines(summarize(store, sid)):
        click.echo(line)  # plain lines, never wrapped: they are read and grepped
    try:
        path = draw_timeline(build_timeline(store, sid), _report_path(store, sid))
    except ConfigError as exc:
        click.echo(f"no picture: {exc}")
        return
    click.echo(f"picture of the session: {path}")
    click.echo(
        f"Explore: tooltray show {sid} · tooltray history {sid} · tooltray report {sid} · "
        f'tooltray explain "what is the weather in Oslo?" --session {sid}'
    )


def _play(
    store: Store, sid: str, done: int, end: int, console: Console, resumed: bool = False
) -> None:
    """Play turns ``done + 1`` to ``end`` through a real trinket and print their table
    (``resumed``: the session is stored, so its first turn here is a session boundary)."""
    from rich.progress import Progress

    from tooltray.memory.cli.demo_play import DemoRun
    from tooltray.memory.config import Settings
    from tooltray.memory.core.trinket import ToolLoaderTrinket
    from tooltray.tools.demo import demo_registry, demo_script, demo_skills_dir

    script = demo_script()
    settings = Settings(db=str(store.url), skills_dir=demo_skills_dir())
    trinket = ToolLoaderTrinket(demo_registry(), store, settings=settings)
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("embedding the demo catalog", total=None)
        trinket.catalog.selector(
            progress=lambda n, total: bar.update(task, completed=n, total=total)
        )
    turns = store.turns(sid)
    run = DemoRun(trinket, sid, turns[-1].prefix_hash if turns else "")
    for number in range(done + 1, end + 1):
        messages = _history(script, number - 1) + [
            {"role": "user", "content": script[number - 1]["user"]}
        ]
        if number == done + 1 and resumed:
            trinket.start(sid, messages)  # an explicit resume: a session boundary
        run.turn(number, script[number - 1], messages)
    trinket.close()
    console.print(run.table)


@click.command("demo")
@DB_OPTION
@click.option("--fresh", is_flag=True, help="Start a new demo session instead of resuming.")
@click.option(
    "--turns",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Play at most N more turns now (run again to go on).",
)
def demo(db: str | None, fresh: bool, turns: int | None) -> None:
    """Play (or resume) the scripted demo session through the real trinket, embedder and store."""
    from tooltray.memory.config import Settings
    from tooltray.memory.store import Store, resolve_url
    from tooltray.memory.store.access import require_writable
    from tooltray.tools.demo import demo_script

    total = len(demo_script())
    url = resolve_url(db)
    Settings(db=url)  # a bad setting is refused before the store is opened (or created)
    require_writable(url)  # the demo writes every turn: a read-only store is refused up front
    store = Store(url, auto_upgrade=True)
    sid, done = latest_session(store, fresh)
    if done >= total:
        click.echo(
            f"{sid} is finished ({done} of {total} turns); its summary follows. "
            "`tooltray demo --fresh` starts a new session."
        )
    else:
        end = total if turns is None else min(total, done + turns)
        resumed = store.snapshot(sid) is not None
        verb = "resuming" if resumed else "starting"
        click.echo(f"{verb} {sid} at turn {done + 1} of {total} (store: {store.url})")
        _play(store, sid, done, end, table_console(), resumed)
    _close(store, sid)
    store.close()


COMMANDS = [demo]
