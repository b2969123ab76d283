"""Model-written ``load_tools`` queries for the real-MCP corpus: a documented generator.

No public trajectory of the task sets used here holds a model's own tool-search text (MCP-Atlas's
trajectories call tools that were enabled up front), so the searches are generated in the shapes
frontier models write when given a search tool (issue 35), one search per needed tool and shape
(``bench/mcp_written.py`` holds searches a model wrote for the same needs):

- ``keywords``: up to five content words, e.g. ``weather forecast beijing tomorrow``;
- ``sentence``: a whole sentence of the user's request, as the model restates its need;
- ``server_tool``: ``server: <kind of server>\\ntool: <what it does>``, the kind from the server's
  name words (``amap maps``), what it does from the keywords;
- ``guessed_name``: a snake_case name the model guesses, ``<verb>_<word>_<word>``
  (``get_stock_price``).

The words come from the request only, never from the tool's name or description: of the task's
sentences, the one sharing most words with the needed tool's text is the model's statement of that
need, and its words are ranked by that overlap first (a model names the thing it looks for). A
need the request leaves implicit (save to a file, read a page, run a command) has the intent
sentence a model writes for it (``write text to a file``), and the sentence the corpus added to
state it (``First read https://...``) is no other need's statement: a need's sentence comes from
the task's own text (the turn's ``task``), not from that added one. When sentences share as many
words with the tool (often none: a description in Chinese), the one with most content words is
the statement, not the first (which was often a greeting, ``Hi!``, and an empty keyword query).
"""

from __future__ import annotations

import re
from typing import Any

STOP = frozenset(
    """a an the and or but if then than that this these those of in on at to for from by with
    about as is are was were be been being do does did done have has had having i me my we our
    you your he she it its they them their what which who whom whose when where why how all any
    both each few more most other some such no nor not only own same so too very can will just
    should now also please tell give me find get use using need want would could there here
    into out up down over under again further once let lets us answer question following based
    file""".split()
)
VERBS = tuple(
    "search find list read write create convert calculate run fetch download query compare check "
    "show look save get".split()
)
SHAPES = ("keywords", "sentence", "server_tool", "guessed_name")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+|[0-9]+|[\u4e00-\u9fff]+")


def words(text: str) -> list[str]:
    """Lower-case content words of ``text`` in order (identifiers split on ``_``/camelCase)."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", text.replace("_", " ").replace("-", " "))
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOP and len(w) > 2]


def sentences(text: str) -> list[str]:
    """The request's sentences (a request without stops is one sentence)."""
    parts = [s.strip() for s in re.split(r"(?<=[.?!。？])\s+|\n+", text) if s.strip()]
    return parts or [text.strip()]


def _need_sentence(text: str, tool_words: set[str]) -> str:
    """The sentence sharing most words with the tool; of equals, the one saying most (a model
    restating a need does not restate ``Hi!``)."""
    return max(sentences(text), key=lambda s: (len(set(words(s)) & tool_words), len(set(words(s)))))


def _keywords(sentence: str, tool_words: set[str], k: int = 5) -> list[str]:
    own = list(dict.fromkeys(words(sentence)))
    ranked = [w for w in own if w in tool_words] + [w for w in own if w not in tool_words]
    return ranked[:k]


def _kind(server: str) -> str:
    parts = [p for p in re.split(r"[-_.\s]+", server.lower()) if p and p not in ("mcp", "server")]
    return " ".join(parts) or server


def _guess(sentence: str, keys: list[str]) -> str:
    said = [w.lower() for w in re.findall(r"[A-Za-z]+", sentence)]
    verb = next((w for w in said if w in VERBS), "get")
    nouns = [k for k in keys if k != verb and k.isascii()][:2] or ["info"]
    return "_".join([verb, *nouns])


def shapes(text: str, server: str, tool_text: str, intent: str | None) -> dict[str, str]:
    """The four query shapes a model writes for one need of a request."""
    if intent:
        sentence, keys = intent[0].upper() + intent[1:], words(intent)
    else:
        tool_words = set(words(tool_text))
        sentence = _need_sentence(text, tool_words)
        keys = _keywords(sentence, tool_words)
    what = intent or " ".join(keys)
    return {
        "keywords": " ".join(keys),
        "sentence": sentence[:300],
        "server_tool": f"server: {_kind(server)}\ntool: {what}",
        "guessed_name": _guess(sentence, keys),
    }


def searches_for(
    turn_id: str, turn: dict[str, Any], names: list[str], servers: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """One search row per needed tool and shape: ``{"id", "turn", "tool", "shape", "query"}``."""
    rows = []
    for (server, tool), name, intent in zip(turn["needs"], names, turn["intents"], strict=True):
        spec = next(t for t in servers[server]["tools"] if t["name"] == tool)
        tool_text = f"{tool} {spec.get('description') or ''}"
        text = turn.get("task") or turn["query"]
        for shape, query in shapes(text, server, tool_text, intent).items():
            row = {"id": f"{turn_id}:{name}:{shape}", "turn": turn_id, "tool": name}
            rows.append({**row, "shape": shape, "query": query})
    return rows
