"""Schema versions, one home: the revisions tooltray ships, the one a database is at, and the rules
for opening it (the one-line refusals: damaged, foreign, newer, older).

Reading a SQLite file's revision and the migration files' headers needs neither SQLAlchemy nor
Alembic, so ``tooltray db current`` and ``tooltray history`` start fast: opening a database at head
only needs the newest revision's name, and Alembic's ``ScriptDirectory`` imports Alembic and runs
every migration module. Each migration declares ``revision`` and ``down_revision`` on one line
(Alembic's template), which is all a linear chain needs; anything else (a merge's tuple of parents,
a hand-edited header) raises :class:`LookupError` and Alembic is asked instead. A test checks this
reading against Alembic's.
"""

from __future__ import annotations

import io
import re
from importlib.resources import files
from typing import TYPE_CHECKING

from tooltray.memory.store.probe import Probe, probe
from tooltray.memory.store.url import display_url, resolve_url, sqlite_file
from tooltray.tools.errors import SchemaVersionError, StoreError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from sqlalchemy import Connection


_DECLARED = re.compile(
    r"""^(revision|down_revision)\s*(?::[^=\n]*)?=\s*(?:["']([\w-]+)["']|(None))\s*$""",
    re.MULTILINE,
)


def chain() -> dict[str, str | None]:
    """Revision -> the revision it follows (``None`` for the first), one per migration file."""
    out: dict[str, str | None] = {}
    for entry in (files("tooltray.migrations") / "versions").iterdir():
        if entry.name.endswith(".py") and not entry.name.startswith("_"):
            revision, down = _declared(entry.read_text(encoding="utf-8"), entry.name)
            out[revision] = down
    return out


def _declared(source: str, name: str) -> tuple[str, str | None]:
    found = {m.group(1): m.group(2) for m in _DECLARED.finditer(source)}
    if "revision" not in found or "down_revision" not in found or found["revision"] is None:
        raise LookupError(f"{name} has no one-line `revision` and `down_revision`")
    return found["revision"], found["down_revision"]


def head_revision() -> str:
    """The one revision no other follows; :class:`LookupError` unless there is exactly one."""
    revisions = chain()
    heads = set(revisions) - set(revisions.values())
    if len(heads) != 1:
        raise LookupError(f"the migrations have {len(heads)} heads, not one")
    return heads.pop()


def alembic_config(url: str, connection: Connection | None = None) -> Config:
    """An Alembic config for tooltray's migrations; no ``alembic.ini`` is needed."""
    from alembic.config import Config

    cfg = Config(stdout=io.StringIO())
    cfg.set_main_option("script_location", str(files("tooltray.migrations")))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.attributes["connection"] = connection
    return cfg


def head() -> str:
    """The newest schema revision this tooltray knows (read without Alembic when it can be)."""
    try:
        return head_revision()
    except LookupError:
        rev = _scripts().get_current_head()
        assert rev is not None, "tooltray ships at least one migration"
        return rev


def known_revisions() -> set[str]:
    """Every revision this tooltray can upgrade from."""
    try:
        return set(chain())
    except LookupError:
        return {rev.revision for rev in _scripts().walk_revisions()}


def _scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config("sqlite://"))


def current(url: str) -> str | None:
    """The database's schema revision (``None`` when it is empty or missing); never writes."""
    found = checked_probe(resolve_url(url))
    return found.revision


def checked_probe(url: str) -> Probe:
    """:func:`probe` ``url``; a damaged or foreign database is refused with the fix."""
    found = probe(url)
    where = sqlite_file(url) or display_url(url)
    if found.kind == "corrupt":
        raise StoreError(
            f"{where} is not a readable SQLite database ({found.detail}): move it aside or "
            "restore a backup, then retry; tooltray left it unchanged"
        )
    if found.kind == "foreign":
        shown = ", ".join(map(_printable, found.tables[:5]))
        shown += ", ..." if len(found.tables) > 5 else ""
        raise StoreError(
            f"{where} is not a tooltray database (it holds other tables: {shown}): "
            "point --db (or TOOLTRAY_DB) at another file; tooltray left it unchanged"
        )
    return found


def require_head(url: str, found: Probe) -> None:
    """Refuse a database of ours that is not at :func:`head`, naming what to run or install."""
    want = head()
    if found.revision == want:
        return
    if found.revision not in known_revisions():
        raise newer(url, str(found.revision))
    raise SchemaVersionError(
        f"the database schema is at {found.revision}, this tooltray needs {want}: "
        f"run `tooltray db upgrade --db {display_url(url)}` (back up first)"
    )


def _printable(name: str) -> str:
    """A table name fit for a one-line message (a damaged file can hold any bytes)."""
    return "".join(c if c.isprintable() else "?" for c in name)[:40]


def newer(url: str, revision: str) -> SchemaVersionError:
    """The refusal of a database written by a newer tooltray (left as it is)."""
    return SchemaVersionError(
        f"the database at {display_url(url)} was written by a newer tooltray (schema revision "
        f"{_printable(revision)}, this tooltray knows up to {head()}): upgrade tooltray to use it"
    )
