"""Look at a database without changing it: empty, ours (at which revision), foreign, or corrupt.

This runs before any engine that could write is opened, because opening a SQLite file in WAL mode
already rewrites its header: a file that is not ours must be left exactly as it was found.

A SQLite file is read with the stdlib (:mod:`~tooltray.memory.store.probe_file`); SQLAlchemy loads
only for a server, or a URL only it can read (:mod:`~tooltray.memory.store.probe_server`), so
``tooltray db current`` starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tooltray.memory.store.probe_file import TABLES as TABLES  # re-exported: callers use them
from tooltray.memory.store.probe_file import VERSION_TABLE as VERSION_TABLE
from tooltray.memory.store.probe_file import Probe as Probe
from tooltray.memory.store.probe_file import first_line as first_line
from tooltray.memory.store.probe_file import is_ours as is_ours
from tooltray.memory.store.probe_file import probe_sqlite_file
from tooltray.memory.store.url import display_url as display_url
from tooltray.memory.store.url import plain_sqlite_path

if TYPE_CHECKING:
    from tooltray.tools.errors import StoreError


def probe(url: str) -> Probe:
    """Classify the database at ``url`` without writing to it (a missing file is ``empty``)."""
    path = plain_sqlite_path(url)
    if path is not None:
        return probe_sqlite_file(path)
    from tooltray.memory.store.probe_server import probe_other

    return probe_other(url)


def no_database(url: str) -> StoreError:
    """The error of a command that reads a store where there is none: where it looked, and the
    two ways to make one (a command that reads must not create a store on a typo)."""
    from tooltray.tools.errors import StoreError

    return StoreError(
        f"no tooltray database at {display_url(url)}: check --db / TOOLTRAY_DB, or make one "
        "with `tooltray demo` (a demo session) or `tooltray db upgrade` (an empty store)"
    )
