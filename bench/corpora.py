"""Multi-turn corpora in the shared format (``../shared/data/README.md``) as replayable sessions.

A corpus folder holds ``tools.jsonl`` and ``queries.dev.jsonl``; each query row is one turn with
calls: ``{"id", "query", "gold", "turns"}`` where ``turns`` holds every earlier user message (or
``null``). Files skip turns without calls, so turn numbers have gaps (apibank: [0, 1, 2, 5]); the
messages of a turn are therefore built from its own ``turns`` field, never from the replayed
neighbours. Conversation ids are ``<conv>_t<turn>`` when the id says so, else the conversation is
named by its first user message and the turn is the number of earlier messages.

Per-conversation small catalogs (``bfcl_small``): the bfcl_multiturn dev split, each
conversation served only its own API classes, as BFCL itself serves them. The shared data records
a tool's class as its ``group`` and a conversation's calls as ``gold``, so a conversation's
classes are the groups of every gold tool of every one of its turns (17 distinct class sets over
the dev split's 121 conversations, 17-40 tools each); :func:`registries` gives each conversation
the registry of its own classes.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from tooltray.tools.demo import demo_registry, demo_script
from tooltray.tools.importers.catalog import read_catalog
from tooltray.tools.registry import ToolRegistry

PLACEHOLDER = "(done)"
SMALL = {"bfcl_small": "bfcl_multiturn"}
"""Corpora of per-conversation small catalogs, and the corpus each is cut from."""
_TURN_ID = re.compile(r"^(?P<conv>.+)_t(?P<turn>\d+)$")


@dataclass(frozen=True)
class Turn:
    """One turn with calls: the user message, the gold tools, every earlier user message."""

    query: str
    gold: tuple[str, ...]
    earlier: tuple[str, ...] = ()

    @property
    def number(self) -> int:
        """The turn's position in the conversation (earlier user messages before it)."""
        return len(self.earlier)


@dataclass(frozen=True)
class Conversation:
    """One conversation: its id and its turns with calls, in order (gaps allowed)."""

    id: str
    turns: tuple[Turn, ...]


def natural_key(text: str) -> list[tuple[int, int | str]]:
    """Sort key that orders ``conv_2`` before ``conv_10``."""
    return [(0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", text) if p]


def _conv_and_turn(row: dict[str, object]) -> tuple[str, int]:
    earlier = list(row.get("turns") or [])  # type: ignore[call-overload]
    match = _TURN_ID.match(str(row["id"]))
    if match:
        return match["conv"], int(match["turn"])
    first = str(earlier[0] if earlier else row["query"])
    return "conv-" + hashlib.sha1(first.encode()).hexdigest()[:10], len(earlier)


def load_registry(data: Path, corpus: str) -> tuple[ToolRegistry, dict[str, str]]:
    """The corpus registry (group = bundle) and original -> registered tool names."""
    if corpus == "demo":
        return demo_registry(), {}
    path = data / SMALL.get(corpus, corpus) / "tools.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: pass --data DIR holding {corpus}/tools.jsonl.")
    catalog = read_catalog(path, sanitize=True, source=corpus)
    back = {orig: new for new, orig in catalog.renamed.items()}
    return ToolRegistry.from_catalog(path, sanitize=True), back


def load_conversations(
    data: Path, corpus: str, names: dict[str, str] | None = None
) -> list[Conversation]:
    """The corpus's conversations in natural id order, each one's turns in order."""
    if corpus == "demo":
        return [demo_conversation()]
    names = names or {}
    by_conv: dict[str, dict[int, Turn]] = {}
    for line in (
        (data / SMALL.get(corpus, corpus) / "queries.dev.jsonl").read_text("utf-8").splitlines()
    ):
        if not line.strip():
            continue
        row = json.loads(line)
        conv, number = _conv_and_turn(row)
        gold = tuple(names.get(g, g) for g in row["gold"])
        earlier = tuple(str(t) for t in row.get("turns") or [])
        by_conv.setdefault(conv, {})[number] = Turn(str(row["query"]), gold, earlier)
    return [
        Conversation(c, tuple(by_conv[c][k] for k in sorted(by_conv[c])))
        for c in sorted(by_conv, key=natural_key)
    ]


def registries(
    corpus: str, registry: ToolRegistry, convs: list[Conversation]
) -> dict[str, ToolRegistry]:
    """The registry each conversation sees: the corpus's, or (small catalogs) its own classes'."""
    if corpus not in SMALL:
        return {c.id: registry for c in convs}
    by_classes: dict[frozenset[str], ToolRegistry] = {}
    out = {}
    for conv in convs:
        classes = classes_of(registry, conv)
        if classes not in by_classes:
            by_classes[classes] = small_registry(registry, classes)
        out[conv.id] = by_classes[classes]
    return out


def classes_of(registry: ToolRegistry, conv: Conversation) -> frozenset[str]:
    """The API classes (bundles) of every gold tool of ``conv``."""
    specs = (registry.get(g) for turn in conv.turns for g in turn.gold)
    return frozenset(s.bundle for s in specs if s is not None and s.bundle)


def small_registry(registry: ToolRegistry, classes: frozenset[str]) -> ToolRegistry:
    """A registry holding only the tools (and bundle descriptions) of ``classes``."""
    tools = [e.spec for e in registry.catalog.entries() if e.spec.bundle in classes]
    bundles = [b for name, b in registry.catalog.bundle_info().items() if name in classes]
    return ToolRegistry(tools, bundles=bundles)


def demo_conversation() -> Conversation:
    """The demo script as one conversation (meta-tool calls are not gold)."""
    from tooltray.memory.metatools.meta_tools import META_TOOL_NAMES

    turns: list[Turn] = []
    users: list[str] = []
    for t in demo_script():
        gold = tuple(c["name"] for c in t["calls"] if c["name"] not in META_TOOL_NAMES)
        turns.append(Turn(str(t["user"]), gold, tuple(users)))
        users.append(str(t["user"]))
    return Conversation("demo", tuple(turns))


def messages_for(turn: Turn) -> list[dict[str, str]]:
    """Earlier user messages with assistant placeholders, then the turn's own message."""
    out: list[dict[str, str]] = []
    for text in turn.earlier:
        out += [{"role": "user", "content": text}, {"role": "assistant", "content": PLACEHOLDER}]
    out.append({"role": "user", "content": turn.query})
    return out
