"""A SQLite authorizer that makes a connection strictly read-only, ATTACH and VACUUM INTO included.

``mode=ro`` and ``query_only`` stop writes to the open file, but not ``ATTACH 'new.db'`` or
``VACUUM INTO 'copy.db'``, which create files elsewhere. The authorizer refuses those at prepare
time (so no file is ever created), together with DDL, DML and PRAGMAs that set a value.
"""

from __future__ import annotations

import sqlite3
import sys

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
