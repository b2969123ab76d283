"""Which database, read without SQLAlchemy: the URL to use and, for a plain SQLite URL, its file.

``import sqlalchemy`` alone costs about half a second of CPU, more than ``tooltray sql``,
``tooltray history`` and ``tooltray db current`` may take in all; on a SQLite store (the default)
they read the file with the stdlib. So the common URL forms are read here by hand:
``sqlite:///relative.db``, ``sqlite:////abs/path.db`` and the same with ``sqlite+pysqlite``,
whose path holds only characters SQLAlchemy also leaves alone. Anything else (query parameters,
in-memory, percent escapes, other drivers, PostgreSQL) is ``None`` here and goes to
:func:`parse_url`, which imports SQLAlchemy only when called; a test keeps both readings equal.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from tooltray.tools.errors import StoreError

if TYPE_CHECKING:
    from sqlalchemy.engine import URL

from tooltray.memory.config_file import config_db

ENV_DB = "TOOLTRAY_DB"
DEFAULT_FILE = "tooltray.db"
NAME_MAX = 255  # bytes in one file or folder name: ext4, XFS, btrfs, APFS, NTFS (in UTF-16 units)
_PG_ALIASES = ("postgres://", "postgresql://", "postgresql+psycopg2://")
# The characters SQLAlchemy's make_url keeps as they are in a SQLite path (and renders back).
_PLAIN = re.compile(r"(?:sqlite|sqlite\+pysqlite):///([A-Za-z0-9 +\-./_~]+)")


def resolve_url(url: str | None = None) -> str:
    """The database URL to use: ``url``, else ``$TOOLTRAY_DB``, else ``db`` in ``tooltray.toml``
    (:mod:`tooltray.memory.config_file`), else ``./tooltray.db``: the order ``Settings().db``
    follows too, so the CLI and the user's code open the same store.

    A plain file path becomes a SQLite URL; ``postgres://``/``postgresql://`` use psycopg 3.

    Raises:
        StoreError: a file name longer than the file system allows.
        ConfigError: the TOML file is broken.
    """
    raw = url or os.environ.get(ENV_DB) or config_db() or str(Path.cwd() / DEFAULT_FILE)
    raw = raw.strip()
    if "://" not in raw:
        return f"sqlite:///{Path(check_name(raw)).expanduser().resolve()}"
    for alias in _PG_ALIASES:
        if raw.startswith(alias):
            return "postgresql+psycopg://" + raw[len(alias) :]
    return raw


def check_name(path: str) -> str:
    """``path`` when each of its names fits the file system (255 bytes on most), else refuse.

    The OS would say only "File name too long" from deep inside the first ``stat``.
    """
    for part in Path(path).parts:
        size = len(os.fsencode(part))
        if size > NAME_MAX:
            from tooltray.tools.errors import StoreError, shown

            raise StoreError(
                f"a name in the database path is {size} bytes ({shown(part, 24)}), more than the "
                f"{NAME_MAX} a file or folder name may have: pass a shorter --db (or TOOLTRAY_DB)"
            )
    return path


def plain_sqlite_path(url: str) -> Path | None:
    """The file of a plain SQLite URL; ``None`` for any other URL (ask SQLAlchemy then)."""
    found = _PLAIN.fullmatch(url)
    return Path(check_name(found.group(1))).expanduser() if found else None


def sqlite_file(url: str) -> Path | None:
    """The file of any SQLite URL (``None``: in-memory or not SQLite); SQLAlchemy only if needed.

    Raises:
        StoreError: ``url`` is not a database URL tooltray supports.
    """
    path = plain_sqlite_path(url)
    if path is not None:
        return path
    return sqlite_path(url)


def parse_url(url: str) -> URL:
    """Parse ``url`` (or a plain SQLite file path) and check it names a supported backend."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    if url and "://" not in url:
        url = resolve_url(url)
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(
            f"{url!r} is not a database URL: use sqlite:///path/to/file.db "
            "or postgresql+psycopg://user@host/dbname"
        ) from exc
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(
            f"unsupported database {parsed.get_backend_name()!r} in {url!r}: "
            "tooltray stores state in SQLite or PostgreSQL"
        )
    return parsed


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL (``None`` for in-memory or non-SQLite URLs)."""
    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(check_name(parsed.database or "")).expanduser()


def is_sqlite(url: str) -> bool:
    """True when ``url`` names a SQLite database."""
    return parse_url(url).get_backend_name() == "sqlite"


def display_url(url: str) -> str:
    """``url`` with any password hidden, for messages (a plain SQLite URL has none)."""
    if plain_sqlite_path(url) is not None:
        return url
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
