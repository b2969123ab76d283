"""Bundles for a catalog that has none, from what its tool names share.

OpenAI and MCP tool arrays carry no bundle field, so an imported catalog used to have no menu:
the model had to guess what to ask ``load_tools`` for, and selection lost the bundle lift that
keeps siblings (``list_calendar_events`` beside ``create_calendar_event``) together. Names are
the one structure every catalog has: ``server__tool`` names group by server, and other names by
the rarest content word two or more of them share (``calendar``, ``email``), never by a verb.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from tooltray.tools.spec import ToolSpec

_SERVER = re.compile(r"^([A-Za-z0-9][A-Za-z0-9-]*)__[A-Za-z0-9]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_PARTS = re.compile(r"[_.\-/\s]+")
GENERIC = frozenset(
    (
        "a an and add all by check create del delete do edit fetch find for from get in info "
        "is list make new of off on or post put query read remove run search send set show "
        "start stop the to turn update upsert use v1 v2 write with by id ids item items data"
    ).split()
)
"""Verbs and filler: shared by unrelated tools, so they never name a bundle."""
MAX_SHARE = 0.5
"""A word shared by more than this share of the catalog says nothing about any one tool."""


def words(name: str) -> list[str]:
    """The lower-cased content words of a tool name, in order, each once."""
    out = [_fold(w.lower()) for part in _PARTS.split(name) for w in _CAMEL.split(part) if w]
    return list(dict.fromkeys(w for w in out if w not in GENERIC and not w.isdigit()))


def _fold(word: str) -> str:
    """``events`` -> ``event`` (not ``address`` or short words), as retrieval folds plurals."""
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def server_of(name: str) -> str | None:
    """``github`` for ``github__create_issue``: the MCP server a client-style name carries."""
    found = _SERVER.match(name)
    return found.group(1) if found else None


def infer_groups(names: Sequence[str]) -> dict[str, str]:
    """Tool name -> inferred bundle name, for the tools that share one; the rest stay out.

    By server prefix where at least two names carry the same one; otherwise by the content word
    of the name that the fewest (but at least two) other names share, below ``MAX_SHARE``.
    """
    servers = Counter(s for s in map(server_of, names) if s)
    groups = {n: s for n in names if (s := server_of(n)) and servers[s] >= 2}
    rest = [n for n in names if n not in groups]
    counts = Counter(w for n in rest for w in words(n))
    limit = max(2, int(MAX_SHARE * len(names)))
    for name in rest:
        shared = [w for w in words(name) if 2 <= counts[w] <= limit]
        if shared:
            groups[name] = min(shared, key=lambda w: (counts[w], words(name).index(w)))
    return groups


def grouped(specs: Sequence[ToolSpec]) -> list[ToolSpec]:
    """``specs`` with inferred bundles when none of them has one (else unchanged)."""
    if any(s.bundle for s in specs):
        return list(specs)
    groups = infer_groups([s.name for s in specs])
    return [
        s.model_copy(update={"bundle": groups[s.name]}) if s.name in groups else s for s in specs
    ]
