"""A strictly read-only SQLite connection, ATTACH and VACUUM INTO included, with the stdlib only.

``mode=ro`` and ``query_only`` stop writes to the open file, but not ``ATTACH 'new.db'`` or
``VACUUM INTO 'copy.db'``, which create files elsewhere. The authorizer refuses those at prepare
time (so no file is ever created), together with DDL, DML and PRAGMAs that set a value.
:func:`open_readonly` is what ``tooltray sql`` and ``tooltray history`` read a SQLite store
through; SQLAlchemy's read-only engine (for URLs only it understands) runs :func:`lock_down` too.
"""

from __future__ import annotations

import math
import re
import sqlite3
import sys
from pathlib import Path

from tooltray.memory.cli.sqlconsole.limits import bounded
from tooltray.memory.store.probe_file import BUSY_TIMEOUT_MS, readonly_uri
from tooltray.tools.errors import StoreError

_ALLOWED = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
    sqlite3.SQLITE_TRANSACTION,
    sqlite3.SQLITE_SAVEPOINT,
}
# PRAGMAs that only read, even when given an argument (a table or index name).
_READ_PRAGMAS = {
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "database_list",
    "collation_list",
    "function_list",
    "pragma_list",
    "compile_options",
}
# PRAGMAs that change the file even without an argument.
_WRITING_PRAGMAS = {"optimize", "wal_checkpoint", "incremental_vacuum"}


def readonly_authorizer(
    action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None
) -> int:
    """Allow reads only: deny writes, DDL, ATTACH/DETACH and PRAGMAs that would set a value."""
    if action in _ALLOWED:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        if name in _READ_PRAGMAS or (arg2 is None and name not in _WRITING_PRAGMAS):
            return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def guard_sqlite_readonly(connection: sqlite3.Connection) -> None:
    """Install the read-only authorizer and forbid attaching any other database file."""
    if sys.version_info >= (3, 11):  # 3.10 has no setlimit; the authorizer refuses ATTACH there
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    connection.set_authorizer(readonly_authorizer)


def lock_down(connection: sqlite3.Connection) -> None:
    """Make an open connection read-only: autocommit, busy timeout, ``query_only``, authorizer;
    its SQL functions (SQLAlchemy's ``regexp`` and ``floor``) stop with the statement's bounds."""
    connection.isolation_level = None
    connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    connection.execute("PRAGMA query_only=ON")
    connection.create_function("regexp", 2, bounded(_regexp), deterministic=True)
    connection.create_function("floor", 1, bounded(math.floor), deterministic=True)
    guard_sqlite_readonly(connection)


def open_readonly(path: Path) -> sqlite3.Connection:
    """Open the SQLite file at ``path`` read-only and locked down (see :func:`lock_down`).

    It also gets SQLAlchemy's ``regexp`` and ``floor`` functions, so a statement answers the same
    whichever way the file was opened.

    Raises:
        StoreError: there is no file at ``path``.
    """
    uri = readonly_uri(existing(path))
    connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
    lock_down(connection)
    return connection


def existing(path: Path) -> Path:
    """``path`` when a file is there; a read-only open must never create one.

    Raises:
        StoreError: there is no file at ``path``.
    """
    if not path.is_file():
        raise StoreError(f"no database file at {path}: check --db (nothing to read)")
    return path


def _regexp(pattern: str, value: str | None) -> bool | None:
    """The stdlib ``re`` on purpose: it checks for signals while it backtracks (see bounded)."""
    return None if value is None else re.search(pattern, value) is not None
