"""``tooltray db upgrade|current|prune``, ``tooltray sql QUERY`` and ``tooltray history SESSION``.

Each takes ``--db URL`` (else ``TOOLTRAY_DB``, else ``db`` in ``tooltray.toml``, else
``./tooltray.db``). ``sql`` runs on a read-only connection whose session user holds no power
outside the database, within a time, row and output-size bound: on PostgreSQL a superuser or
role-creating ``--db`` only prepares tooltray's own reader role, and the statement runs on a
separate connection as that role (see :mod:`tooltray.memory.cli.sqlconsole.sql`);
``--sql-url`` / ``TOOLTRAY_SQL_URL`` may name a SELECT-only role instead.

On a SQLite store (the default), ``sql``, ``history`` and ``db current`` read the file with the
stdlib and never import SQLAlchemy or Alembic, so they start in a fraction of a second; the
answers and refusals are the store's own (``tests/store/test_stdlib_reads.py`` runs both paths).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tooltray.memory.cli.console import print_table
from tooltray.memory.cli.options import DB_OPTION, format_option

if TYPE_CHECKING:  # the store (SQLAlchemy, Alembic) loads when a command runs, not on --help
    from rich.table import Table

    from tooltray.memory.cli.sqlconsole.timeline import Timeline
    from tooltray.memory.store import Store
    from tooltray.memory.store.records import HistoryEvent, TurnRecord
    from tooltray.memory.store.retention import Policy

# tooltray.memory.cli.sqlconsole.limits' defaults, repeated so --help does not load it (a test
# keeps them equal)
DEFAULT_LIMIT = 1000
DEFAULT_SECONDS = 30.0
DEFAULT_MAX_BYTES = 10_000_000

FORMAT_OPTION = format_option()


def store_url(db: str | None) -> str:
    """The store URL for ``--db``; a SQLite file must be in a folder that exists.

    Otherwise SQLite only says "unable to open database file", which reads like damage.
    """
    from tooltray.memory.store.url import resolve_url, sqlite_file
    from tooltray.tools.errors import StoreError

    url: str = resolve_url(db)
    path = sqlite_file(url)
    if path is not None and not path.parent.is_dir():
        raise StoreError(
            f"the folder {path.parent} of the database {path} does not exist: create it "
            f"(mkdir -p {path.parent}) or pass another --db"
        )
    return url


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    return value


NARROW = 24


def emit(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    fmt: str,
    title: str = "",
    *,
    narrow: bool = False,
) -> None:
    """Print rows as a rich table (``narrow``: see :func:`_table`), JSON (a list of objects)
    or CSV."""
    if fmt == "json":
        records = [{c: _plain(v) for c, v in zip(columns, row, strict=True)} for row in rows]
        click.echo(json.dumps(records, indent=2, default=str))
    elif fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_plain(v) for v in row] for row in rows])
        click.echo(buffer.getvalue(), nl=False)
    else:
        cells = [["" if v is None else str(_plain(v)) for v in r] for r in rows]
        print_table(_table(columns, cells, title, narrow))


def _table(columns: Sequence[str], cells: list[list[str]], title: str, narrow: bool) -> Table:
    """A rich table; ``narrow`` fits many columns in a terminal: one space between columns and
    each column kept at its natural width up to ``NARROW`` characters, so the free text
    (``detail``) folds instead of every column being cut to a few letters."""
    from rich import box
    from rich.table import Table

    if narrow:
        table = Table(title=title or None, box=box.SIMPLE_HEAD, pad_edge=False, padding=0)
    else:
        table = Table(title=title or None)
    for i, column in enumerate(columns):
        natural = max([len(column), *(len(r[i]) for r in cells)])
        table.add_column(
            column, overflow="fold", min_width=min(natural, NARROW) if narrow else None
        )
    for row in cells:
        table.add_row(*row)
    return table


@click.group("db")
def db_group() -> None:
    """Create, upgrade and inspect the tooltray database schema."""


@db_group.command("upgrade")
@DB_OPTION
def db_upgrade(db: str | None) -> None:
    """Bring the database to the newest schema (back it up first)."""
    from tooltray.memory.store.migrate import current, upgrade
    from tooltray.memory.store.probe import display_url

    url = store_url(db)
    before = current(url)
    after = upgrade(url)
    if before == after:
        click.echo(f"{display_url(url)}: already at {after}")
    else:
        click.echo(f"{display_url(url)}: upgraded from {before or 'empty'} to {after}")


@db_group.command("current")
@DB_OPTION
@FORMAT_OPTION
def db_current(db: str | None, fmt: str) -> None:
    """Show the database's schema revision and whether it needs an upgrade."""
    from tooltray.memory.store.url import display_url
    from tooltray.memory.store.versions import current, head

    url = store_url(db)
    rev, want = current(url), head()
    if rev is None:
        status = "empty: created on first use"
    elif rev == want:
        status = "up to date"
    else:
        status = "needs `tooltray db upgrade`"
    rows = [[display_url(url), rev or "", want, status]]
    emit(["database", "revision", "head", "status"], rows, fmt)


@db_group.command("prune")
@click.option(
    "--before",
    type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S"]),
    help="Drop history and turn rows written before this date (UTC); sessions stay.",
)
@click.option(
    "--max-age",
    "max_age",
    type=click.FloatRange(min=0, min_open=True),
    metavar="DAYS",
    help="Drop sessions idle longer, with their rows and results, and the cached vectors no "
    "index has used as long: those of tools no longer in any catalog built on this store "
    "(a vector in use stays however old; default: the retain_days setting).",
)
@click.option(
    "--max-mb",
    "max_mb",
    type=click.FloatRange(min=0, min_open=True),
    metavar="MB",
    help="SQLite: drop the least recently written sessions until the store fits "
    "(default: the retain_mb setting).",
)
@click.option("--no-vacuum", is_flag=True, help="Keep the freed space in the SQLite file.")
@DB_OPTION
def db_prune(
    before: datetime | None,
    max_age: float | None,
    max_mb: float | None,
    no_vacuum: bool,
    db: str | None,
) -> None:
    """Drop old rows by date, age or size and give the space back; what was learned stays."""
    from tooltray.memory.store import Store, resolve_url
    from tooltray.memory.store.access import require_writable
    from tooltray.memory.store.probe import display_url, no_database, probe

    policy = prune_policy(before, max_age, max_mb, not no_vacuum)
    url = resolve_url(db)
    if probe(url).kind == "empty":
        raise no_database(url)
    require_writable(url)
    with Store(url) as store:
        click.echo(f"{display_url(url)}: {prune_store(store, before, policy)}")


def prune_policy(
    before: datetime | None, max_age: float | None, max_mb: float | None, vacuum: bool
) -> Policy:
    """The retention policy of ``db prune``: its options, else the ``retain_*`` settings."""
    from datetime import timedelta

    from tooltray.memory.config import Settings
    from tooltray.memory.store.retention import Policy
    from tooltray.memory.store.tables import utcnow
    from tooltray.tools.errors import ConfigError

    settings = Settings()
    days = max_age if max_age is not None else settings.retain_days
    mb = max_mb if max_mb is not None else settings.retain_mb
    if before is None and days is None and mb is None:
        raise ConfigError(
            "nothing to prune by: pass --before DATE, --max-age DAYS or --max-mb MB, or set "
            "retain_days / retain_mb (TOOLTRAY_RETAIN_DAYS, tooltray.toml)"
        )
    cutoff = utcnow() - timedelta(days=days) if days is not None else None
    size = int(mb * 1_000_000) if mb is not None else None
    return Policy(before=cutoff, max_bytes=size, vacuum=vacuum)


def prune_store(store: Store, before: datetime | None, policy: Policy) -> str:
    """Run the prune and say what it dropped, in one line."""
    from tooltray.memory.learning.prune import prune_history
    from tooltray.memory.store.retention import apply_policy

    said = []
    if before is not None:
        report = prune_history(store, before)
        said.append(
            f"dropped {report.history} history and {report.turns} turn rows written before "
            f"{before:%Y-%m-%d %H:%M:%S} UTC"
        )
    if policy.before is not None or policy.max_bytes is not None or policy.vacuum:
        d = apply_policy(store, policy)
        said.append(
            f"dropped {d.sessions} sessions, {d.history} history, {d.turns} turn, "
            f"{d.results} result and {d.embeddings} cached-vector rows"
            + (f"; {d.size_before:,} -> {d.size_after:,} bytes" if d.size_after else "")
        )
    return "; ".join(said) + "; learned state kept"


@click.command("sql")
@click.argument("query")
@DB_OPTION
@click.option(
    "--sql-url",
    default=None,
    metavar="URL",
    help=(
        "Connect as this SELECT-only role; else TOOLTRAY_SQL_URL, else --db (a superuser "
        "--db runs the statement as tooltray's locked reader role)."
    ),
)
@click.option(
    "--limit",
    type=click.IntRange(0),
    default=DEFAULT_LIMIT,
    show_default=True,
    help="Most rows to print.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0.001),
    default=DEFAULT_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="Stop the statement after this long.",
)
@click.option(
    "--max-bytes",
    type=click.IntRange(1),
    default=DEFAULT_MAX_BYTES,
    show_default=True,
    help="Stop when the rows fetched pass this many bytes of output.",
)
@FORMAT_OPTION
def sql_command(
    query: str,
    db: str | None,
    sql_url: str | None,
    limit: int,
    timeout: float,
    max_bytes: int,
    fmt: str,
) -> None:
    """Run one read-only SQL statement on the store (writes, DDL and ATTACH are refused).

    It stops with one line at --timeout or --max-bytes, or on Ctrl-C; --limit cuts the rows.
    """
    from tooltray.memory.cli.sqlconsole.sql import resolve_sql_url, run_readonly

    url = resolve_sql_url(sql_url, db)
    _require_store_file(url)
    result = run_readonly(url, query, limit, seconds=timeout, max_bytes=max_bytes)
    emit(result.columns, result.rows, fmt)
    if result.truncated:
        click.echo(f"(first {limit} rows shown; pass --limit to see more)", err=True)


def _require_store_file(url: str) -> None:
    """A SQLite file must be a tooltray store: SQLite would answer ``SELECT 1`` on any file."""
    from tooltray.memory.store.probe import no_database
    from tooltray.memory.store.url import plain_sqlite_path
    from tooltray.memory.store.versions import checked_probe

    path = plain_sqlite_path(url)
    if path is not None and path.is_file() and checked_probe(url).kind == "empty":
        raise no_database(url)


HISTORY_COLUMNS = [
    "turn",
    "kind",
    "tool",
    "source",
    "score",
    "detail",
    "prefix",
    "tool_tokens",
    "loaded",
    "prompt_reused",
    "prompt_new",
    "usage_cached",
    "usage_uncached",
    "usage_output",
]
"""``prompt_reused`` / ``prompt_new``: tooltray's estimate of the turn's prompt tokens re-used
from each previous call's cached prefix and prefilled anew; ``usage_*``: the provider's reported
usage, when the agent passed it with ``turn-completed``."""
SUMMARY = 8  # the per-turn columns after the event's own


def _summary(rec: TurnRecord | None) -> list[Any]:
    if rec is None:
        return [None] * SUMMARY
    usage = [rec.prompt_reused, rec.prompt_new, rec.usage_cached, rec.usage_uncached]
    return [rec.prefix_hash[:12], rec.tool_tokens, rec.loaded_count, *usage, rec.usage_output]


def _timeline(events: list[HistoryEvent], turns: list[TurnRecord]) -> list[list[Any]]:
    by_turn = {t.turn: t for t in turns}
    grouped: dict[int, list[HistoryEvent]] = {}
    for event in events:
        grouped.setdefault(event.turn, []).append(event)
    rows: list[list[Any]] = []
    for number in sorted(set(grouped) | set(by_turn)):
        summary = _summary(by_turn.get(number))
        for event in grouped.get(number, []):
            base = [event.kind, event.tool, event.source, event.score, event.detail]
            rows.append([number, *base, *summary])
        if number not in grouped:
            rows.append([number, *([None] * 5), *summary])
    return rows


SHORT = {"tool_tokens": "tokens", "prompt_reused": "reused", "prompt_new": "new"}
SHORT |= {"usage_cached": "cached"}
SHORT |= {"usage_uncached": "uncached", "usage_output": "output"}
"""Table headers short enough for 14 columns' worth of history in an 80-column terminal."""


def _narrow(columns: list[str], rows: list[list[Any]]) -> tuple[list[str], list[list[Any]]]:
    """The table for people: short headers, 8-character prefix hashes, and no column that is
    empty on every row (provider usage is often not reported), so it reads in 80 columns."""
    keep = [i for i, _ in enumerate(columns) if any(r[i] not in (None, "") for r in rows)]
    cut = columns.index("prefix")
    rows = [[str(v)[:8] if i == cut and v else v for i, v in enumerate(r)] for r in rows]
    return [SHORT.get(columns[i], columns[i]) for i in keep], [[r[i] for i in keep] for r in rows]


def _compact(rows: list[list[Any]]) -> list[list[Any]]:
    """For people: show the turn and its summary once, on the turn's first row."""
    shown: list[list[Any]] = []
    for i, row in enumerate(rows):
        same_turn = i > 0 and rows[i - 1][0] == row[0]
        score = f"{row[4]:.3f}" if isinstance(row[4], float) else row[4]
        blank = ["", *row[1:4], score, row[5], *[""] * SUMMARY]
        shown.append(blank if same_turn else [*row[:4], score, *row[5:]])
    return shown


@click.command("history")
@click.argument("session")
@DB_OPTION
@FORMAT_OPTION
def history_command(session: str, db: str | None, fmt: str) -> None:
    """Show a session's timeline turn by turn: events, prefix hash, tool tokens, loaded count."""
    from tooltray.memory.store.probe import no_database, probe
    from tooltray.memory.store.url import display_url, plain_sqlite_path, resolve_url
    from tooltray.tools.errors import StoreError, shown

    url = resolve_url(db)
    if probe(url).kind == "empty":
        raise no_database(url)
    path = plain_sqlite_path(url)
    found = stored_timeline(url, session) if path is None else file_timeline(url, path, session)
    if found is None:
        raise StoreError(
            f"no session {shown(session)} in {display_url(url)}: list them with `tooltray sessions`"
        )
    rows, columns = _timeline(*found), HISTORY_COLUMNS
    if fmt == "table":
        columns, rows = _narrow(HISTORY_COLUMNS, _compact(rows))
    emit(columns, rows, fmt, title=f"session {session}", narrow=True)


def file_timeline(url: str, path: Path, session: str) -> Timeline | None:
    """The session's events and turns read from a SQLite file without SQLAlchemy.

    The file passes the store's opening rules first (ours, not damaged, at head), so a file the
    store would refuse is refused here with the same line.
    """
    from tooltray.memory.cli.sqlconsole.timeline import read_timeline
    from tooltray.memory.store.versions import checked_probe, require_head

    require_head(url, checked_probe(url))
    return read_timeline(path, session)


def stored_timeline(url: str, session: str) -> Timeline | None:
    """The session's events and turns through the :class:`Store` (PostgreSQL, any URL)."""
    from tooltray.memory.store import Store

    with Store(url) as store:
        if store.snapshot(session) is None:
            return None
        return store.history(session), store.turns(session)


COMMANDS: list[click.Command] = [db_group, sql_command, history_command]
