"""What a database is (empty, ours at which revision, foreign, corrupt), for a SQLite file
read with the stdlib; :mod:`~tooltray.memory.store.probe` asks here or, for a server,
:mod:`~tooltray.memory.store.probe_server`, which reads it through SQLAlchemy with the same rules.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import quote

BUSY_TIMEOUT_MS = 5000
"""How long a SQLite reader or writer waits on another process's lock before failing."""
SQLITE_HEADER = b"SQLite format 3\x00"
MIN_PAGE_SIZE = 512
VERSION_TABLE = "alembic_version"
# Tables every tooltray schema has had since the first revision: with alembic_version, they tell
# our databases (any revision, older or newer) from other Alembic-managed apps.
SIGNATURE = frozenset({"sessions", "loaded_tools", "history"})
Kind = Literal["empty", "ours", "foreign", "corrupt"]
# Every table of the newest schema (the models define them; a test keeps the two equal). It lives
# here, not in the models, so that the probe and `tooltray sql` do not load the ORM.
TABLES = (
    "sessions",
    "loaded_tools",
    "history",
    "turns",
    "embeddings",
    "results",
    "tooltray_meta",
    "learn_pairs",
    "learn_requests",
    "learn_searches",
)


@dataclass(frozen=True)
class Probe:
    """What a database holds: ``kind``, our ``revision`` if any, and the tables found."""

    kind: Kind
    revision: str | None = None
    tables: tuple[str, ...] = ()
    detail: str = ""


def classify(tables: set[str], revision: str | None) -> Probe:
    """What a database holding ``tables`` at ``revision`` (from ``alembic_version``) is."""
    names = tuple(sorted(tables))
    if not tables - {VERSION_TABLE} and revision is None:
        return Probe("empty", tables=names)
    if VERSION_TABLE in tables and revision is not None and tables >= SIGNATURE:
        return Probe("ours", revision, names)
    return Probe("foreign", revision, names)


def probe_sqlite_file(path: Path) -> Probe:
    """Classify the SQLite file at ``path`` (missing or zero bytes: ``empty``)."""
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):
        return Probe("empty")
    if not path.is_file():
        return Probe("corrupt", detail=f"{path} is not a regular file")
    with path.open("rb") as fh:
        header = fh.read(len(SQLITE_HEADER))
    if header != SQLITE_HEADER:
        return Probe("corrupt", detail="the file does not start with the SQLite header")
    if path.stat().st_size < MIN_PAGE_SIZE:
        return Probe("corrupt", detail="the file is shorter than one SQLite page (truncated)")
    try:
        return _read_sqlite(path)
    except (sqlite3.Error, UnicodeError, ValueError) as exc:
        return Probe("corrupt", detail=first_line(exc))


def _read_sqlite(path: Path) -> Probe:
    uri = readonly_uri(path)
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    conn.text_factory = _lenient_text
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        tables = {str(r[0]) for r in rows if not str(r[0]).startswith("sqlite_")}
        revision = None
        if VERSION_TABLE in tables:
            row = conn.execute(f"SELECT version_num FROM {VERSION_TABLE}").fetchone()
            revision = str(row[0]) if row else None
        found = classify(tables, revision)
        if found.kind == "empty" and not _intact(conn):
            return Probe("corrupt", detail="its schema is damaged (PRAGMA quick_check failed)")
        return found
    finally:
        conn.close()


def _intact(conn: sqlite3.Connection) -> bool:
    """A schema-less file of more than one page passes ``quick_check`` before it counts as empty.

    A damaged first page can hide every table, and tooltray would then migrate the damaged file.
    """
    if int(conn.execute("PRAGMA page_count").fetchone()[0]) <= 1:
        return True
    rows = conn.execute("PRAGMA quick_check").fetchall()
    return [str(r[0]) for r in rows] == ["ok"]


def _lenient_text(raw: bytes) -> str:
    """Decode a damaged file's names without failing (they only end up in messages)."""
    return raw.decode("utf-8", "replace")


def first_line(exc: BaseException) -> str:
    """The driver's message of ``exc`` on one line (SQLAlchemy adds SQL and links below it)."""
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).splitlines() if line.strip()]
    return lines[0] if lines else type(orig).__name__


def is_ours(found: Probe) -> bool:
    """True when every tooltray table is present (a sanity check for tests and the CLI)."""
    return set(TABLES) <= set(found.tables)


def readonly_uri(path: Path) -> str:
    """The ``mode=ro`` URI of the SQLite file at ``path``, ``immutable`` on read-only media.

    A reader of a WAL store needs its ``-shm`` file; in a folder nobody can write (a read-only
    mount) SQLite cannot create it and says "unable to open database file", as if the file were
    damaged. There nobody can write the file either, so it is safe to read as immutable.
    """
    resolved = path.resolve()
    uri = f"file:{quote(str(resolved))}?mode=ro"
    shm = resolved.with_name(resolved.name + "-shm")
    if not os.access(resolved.parent, os.W_OK) and not shm.exists():
        uri += "&immutable=1"
    return uri
