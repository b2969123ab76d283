"""The schema revisions tooltray ships, read from its migration files without Alembic.

Opening a database that is at head (every ``Store``, ``tooltray history``, ``tooltray db
current``) only needs the newest revision's name, and Alembic's ``ScriptDirectory`` costs about
a second of CPU: it imports Alembic and runs every migration module. Each migration declares
``revision`` and ``down_revision`` on one line (Alembic's template), which is all a linear chain
needs. Anything else (a merge's tuple of parents, a hand-edited header) raises
:class:`LookupError` and :mod:`~tooltray.memory.store.migrate` asks Alembic instead; a test
checks this reading against Alembic's.
"""

from __future__ import annotations

import re
from importlib.resources import files

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
