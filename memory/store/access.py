"""Whether a SQLite store can be written, and if not, why, in words a user can act on.

SQLite itself only says "attempt to write a readonly database" or "unable to open database file",
which reads as possible damage: but a healthy file on a read-only mount, an immutable file, or a
database named in a folder that does not exist is not damaged, and moving it aside (the advice for
damage) is the wrong fix. SQLite also writes ``-wal``/``-shm`` (or ``-journal``) files beside the
database, so the folder must be writable too.
"""

from __future__ import annotations

import os
from pathlib import Path

from tooltray.memory.store.url import sqlite_file
from tooltray.tools.errors import StoreError

READONLY_HINT = (
    "the database or its folder is read-only (permissions, an immutable file or a read-only "
    "mount): make both writable, or copy the database to a writable folder and pass --db"
)


def why_unwritable(path: Path) -> str | None:
    """What stops SQLite writing the database at ``path`` (``None``: nothing found)."""
    folder = path.parent
    if not folder.is_dir():
        return (
            f"the folder {folder} of the database {path.name} does not exist: create it "
            f"(mkdir -p {folder}) or pass another --db"
        )
    if path.exists() and not os.access(path, os.W_OK):
        return (
            f"the database {path} is read-only (its permissions, an immutable flag or a "
            "read-only mount); it is not damaged and tooltray left it unchanged: make it "
            "writable, or copy it to a writable folder and pass --db"
        )
    if not os.access(folder, os.W_OK):
        what = "keeps its -wal and -shm files" if path.exists() else "would create the database"
        return (
            f"the folder {folder} is read-only (its permissions or a read-only mount), and "
            f"SQLite {what} there: make it writable, or pass --db in a writable folder"
        )
    return None


def require_writable(url: str) -> None:
    """Refuse, with the reason, a SQLite store that cannot be written; other URLs pass.

    Raises:
        StoreError: the file, or its folder, is read-only or missing.
    """
    path = sqlite_file(url)
    if path is None:
        return
    why = why_unwritable(path)
    if why is not None:
        raise StoreError(why)


def require_openable(url: str) -> None:
    """Refuse, with the reason, a WAL store the read-write engine cannot even read.

    Reading a WAL database needs its ``-shm`` file; on read-only media SQLite cannot create it.
    ``tooltray sql`` and ``history`` read such a file as immutable; the store's engine cannot.

    Raises:
        StoreError: the store's folder is read-only and its ``-shm`` file is missing.
    """
    path = sqlite_file(url)
    if path is None or not path.is_file() or os.access(path.parent, os.W_OK):
        return
    if path.with_name(path.name + "-shm").exists():
        return
    raise StoreError(
        f"the folder {path.parent} is read-only (its permissions or a read-only mount) and "
        f"SQLite must create {path.name}-shm there to open the database; it is not damaged: "
        "`tooltray sql` and `tooltray history` read it as it is, or copy it to a writable "
        "folder and pass --db"
    )


def readonly_hint(message: str) -> str:
    """``message`` with the read-only explanation when SQLite's error is about writing."""
    lowered = message.lower()
    if "readonly database" in lowered or "read-only file system" in lowered:
        return f"{message}: {READONLY_HINT}"
    return message
