"""Tool-name rules beyond validity: MCP prefix keys, did-you-mean hints, sanitising.

Models call tools by the name they remember, which is often a prefixed MCP form
(``mcp__github__search``) or a near miss. These helpers let the registry map such names back to
one registered tool, or explain which names were probably meant.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Iterable

from tooltray.tools.errors import ToolSpecError

MAX_NAME = 64
META_NAMES = frozenset({"load_tools", "unload_tools", "fallback", "read_result", "call_tool"})
"""The meta-tools' names (and the ``call_tool`` bridge's): a catalog tool by one of these names
would be shadowed by tooltray's own, so catalog readers refuse it."""
MAX_CANDIDATES = 5
_INVALID = re.compile(r"[^a-zA-Z0-9_.-]")


def strip_prefix(name: str) -> str:
    """Return ``name`` without an ``mcp__server__`` or ``server__`` prefix.

    Both the server and the tool part must be non-empty, so ``__init`` or ``a__`` stay whole.
    """
    parts = name.split("__")
    if len(parts) >= 3 and parts[0] == "mcp" and parts[1] and "__".join(parts[2:]):
        return "__".join(parts[2:])
    if len(parts) >= 2 and parts[0] and "__".join(parts[1:]):
        return "__".join(parts[1:])
    return name


def clash_key(name: str) -> str:
    """The key two registered names must not share: the name without an ``mcp__`` wrapper.

    ``mcp__github__search`` and ``github__search`` are one tool written two ways; ``alpha__search``
    and ``beta__search`` are two servers' tools, named the way Claude Code and most gateways
    name MCP tools, and may both be registered.
    """
    parts = name.split("__")
    if len(parts) >= 3 and parts[0] == "mcp" and parts[1] and "__".join(parts[2:]):
        return "__".join(parts[1:])
    return name


def match_key(name: str) -> str:
    """The loosest key a called name is resolved by: every MCP/server prefix stripped.

    A model may call ``search`` for ``alpha__search``; it resolves while one tool has the key
    (two servers' ``search`` leave it ambiguous: the caller gets both as candidates).

    Equal to applying :func:`strip_prefix` until nothing changes, in one pass over the parts:
    re-splitting after each strip made a name of many ``a__`` parts (a model can send one)
    quadratic.
    """
    parts = name.split("__")
    count, i = len(parts), 0

    def rest_from(j: int) -> bool:  # "__".join(parts[j:]) is non-empty
        return count - j >= 2 or (count - j == 1 and parts[j] != "")

    while True:
        if count - i >= 3 and parts[i] == "mcp" and parts[i + 1] and rest_from(i + 2):
            i += 2
        elif count - i >= 2 and parts[i] and rest_from(i + 1):
            i += 1
        else:
            return "__".join(parts[i:])


def did_you_mean(name: str, pool: Iterable[str], limit: int = MAX_CANDIDATES) -> list[str]:
    """Up to ``limit`` names from ``pool`` the caller probably meant, best first.

    Close spellings (difflib) come first, then names that start with, then contain, the
    request (case-insensitive, also after prefix stripping).
    """
    names = list(dict.fromkeys(pool))
    wanted = match_key(name).lower()
    lowered = {n: match_key(n).lower() for n in names}
    by_key = {v: k for k, v in reversed(lowered.items())}
    close = difflib.get_close_matches(wanted, list(by_key), n=limit, cutoff=0.6)
    out = [by_key[c] for c in close]
    if len(wanted) >= 2:
        out += [n for n in names if lowered[n].startswith(wanted)]
        out += [n for n in names if wanted in lowered[n]]
        out += [n for n in names if len(lowered[n]) >= 3 and lowered[n] in wanted]
    return list(dict.fromkeys(out))[:limit]


def sanitize_name(name: str) -> str:
    """Map ``name`` onto the provider rule: invalid characters become ``_``.

    Names longer than 64 characters keep their first 55 characters plus ``_`` and 8 hex digits
    of the original's sha256, so distinct long names stay distinct and the mapping is stable.
    """
    if not isinstance(name, str) or not name.strip():
        raise ToolSpecError(f"Cannot sanitise name {name!r}: it is empty; give the tool a name.")
    clean = _INVALID.sub("_", name.strip())
    if len(clean) <= MAX_NAME:
        return clean
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{clean[: MAX_NAME - 9]}_{digest}"
