"""How a conversation becomes a retrieval query, and the ToolSearch query forms.

Earlier messages mostly ask for tools the conversation already loaded, so they pull the ranking
away from what the new turn needs. ``adaptive`` (the default) equals ``current`` on ordinary
messages and lends a short follow-up ("yes, do that for the other file too") the previous
message's context; any steady share of the previous message costs recall. The modes' figures are
in ``bench/README.md`` ("Tuned values": the query).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tooltray.memory.retrieval.text import terms
from tooltray.memory.tuning import ADAPTIVE_WEIGHT, SHORT_TERMS, WEIGHTED_WEIGHT
from tooltray.tools.errors import ConfigError

QUERY_MODES = ("adaptive", "current", "current+previous", "weighted", "all")
DEFAULT_MODE = "adaptive"


@dataclass(frozen=True)
class Query:
    """A retrieval query: the text matched in full, plus optional context at a lower weight.

    Attributes:
        text: the main text (the current user message, or a search string).
        context: earlier text scored separately and added at ``context_weight``.
        context_weight: 0 for none.
    """

    text: str
    context: str = ""
    context_weight: float = 0.0

    def __str__(self) -> str:
        return self.text


def build_query(user_messages: Sequence[str], mode: str = DEFAULT_MODE) -> Query:
    """The retrieval query for the latest turn from the user messages (oldest first).

    Args:
        user_messages: the conversation's user messages; assistant text is never used.
        mode: one of :data:`QUERY_MODES` (see the module docstring for measurements).

    Raises:
        ConfigError: unknown ``mode``.
    """
    if mode not in QUERY_MODES:
        raise ConfigError(f"Unknown query mode {mode!r}: use one of {', '.join(QUERY_MODES)}.")
    users = [m for m in user_messages if m and m.strip()]
    if not users:
        return Query("")
    current, previous = users[-1], users[-2] if len(users) > 1 else ""
    if mode == "current" or not previous:
        return Query(current)
    if mode == "current+previous":
        return Query(f"{current} {previous}")
    if mode == "all":
        return Query(" ".join(users))
    if mode == "weighted":
        return Query(current, previous, WEIGHTED_WEIGHT)
    if len(terms(current)) < SHORT_TERMS:
        return Query(current, previous, ADAPTIVE_WEIGHT)
    return Query(current)


def parse_select(text: str) -> list[str] | None:
    """``select:a,b`` -> ``['a', 'b']`` (exact names); ``None`` for any other query."""
    if not text.startswith("select:"):
        return None
    return [w.strip() for w in text[len("select:") :].split(",") if w.strip()]


def parse_required(text: str) -> tuple[str, list[str]]:
    """``+slack send a message`` -> (``send a message``, ``['slack']``).

    A ``+term`` must occur in the tool name (case-insensitive); the rest ranks. A query made only
    of required terms ranks by those terms.
    """
    words = text.split()
    required = [w[1:].lower() for w in words if w.startswith("+") and len(w) > 1]
    rest = " ".join(w for w in words if not w.startswith("+"))
    return (rest or " ".join(required)), required
