"""``tooltray report SESSION [--out FILE.png] [--db URL]``: a picture of one stored session.

Turns across, tools down (loaded, used, escape, evicted, fallback), and the tool tokens of each
turn against eager with the prefix changes marked; the headline figures are printed beside it.
Drawing needs matplotlib (``pip install 'tooltray[report]'``), imported only when a picture is
drawn so the other commands start without it.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from tooltray.memory.cli.options import DB_OPTION
from tooltray.tools.errors import StoreError


def default_out(session_id: str) -> Path:
    """``tooltray-SESSION.png`` in the current folder, the id made safe for a file name."""
    return Path(f"tooltray-{re.sub(r'[^A-Za-z0-9_.-]+', '_', session_id)}.png")


def write_report(url: str, session_id: str, out: Path) -> tuple[Path, list[str]]:
    """Draw ``session_id`` from the store at ``url`` into ``out``; return it and the summary lines.

    Raises:
        StoreError: the session is not in the store.
        ConfigError: matplotlib is not installed.
    """
    from tooltray.memory.report import build_timeline, draw_timeline, summarize, summary_lines
    from tooltray.memory.store import Store

    with Store(url) as store:
        if store.snapshot(session_id) is None:
            raise StoreError(
                f"no session {session_id!r} in the store: list them with "
                "`tooltray sql 'SELECT id, turn FROM sessions'`"
            )
        timeline = build_timeline(store, session_id)
        lines = summary_lines(summarize(store, session_id))
    return draw_timeline(timeline, out), lines


@click.command("report")
@click.argument("session")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="PNG file to write (default: tooltray-SESSION.png here).",
)
@DB_OPTION
def report(session: str, out: Path | None, db: str | None) -> None:
    """Draw a stored session: tools over turns, tokens against eager, prefix changes."""
    from tooltray.memory.report.draw import check_format
    from tooltray.memory.store.access import require_openable
    from tooltray.memory.store.probe import no_database, probe
    from tooltray.memory.store.url import resolve_url

    out = out or default_out(session)
    check_format(out)
    url = resolve_url(db)
    if probe(url).kind == "empty":  # as history, sql and eval: a typo must not create a store
        raise no_database(url)
    require_openable(url)
    _require_session(url, session)
    path, lines = write_report(url, session, out)
    for line in lines:
        click.echo(line)
    click.echo(f"picture: {path}")


def _require_session(url: str, session: str) -> None:
    """Refuse a session a SQLite file lacks before SQLAlchemy and matplotlib are imported,
    which took seconds just to say the name was wrong."""
    from tooltray.memory.cli.db import file_timeline
    from tooltray.memory.store.url import plain_sqlite_path

    path = plain_sqlite_path(url)
    if path is not None and file_timeline(url, path, session) is None:
        raise StoreError(f"no session {session!r} in the store: list them with `tooltray sessions`")


COMMANDS = [report]
