"""What a finished turn teaches, built at ``turn-completed`` from the turn's own records.

The trinket notes each allowed tool the turn used (``tool-used``) and the turn's latest user
message; the planner already embedded that message to select or grow, so its vector is usually
a memo lookup. The result rides on the turn's :class:`Changes` and is stored in its transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from tooltray.memory.config import Settings
from tooltray.memory.learning.signals import StoreSignals
from tooltray.memory.store.base import BaseStore
from tooltray.memory.store.records import Learning

if TYPE_CHECKING:
    from tooltray.memory.retrieval.past import SelectionSignals

Embed = Callable[[str], "tuple[str, NDArray[np.float32]] | None"]
"""A user message -> (embedder id, L2-normalised vector), or ``None`` when it cannot be had."""


def lesson(
    settings: Settings, turn: int, tools: Sequence[str], text: str | None, embed: Embed
) -> Learning | None:
    """The :class:`Learning` of one turn; ``None`` when learning is off or no tool was used."""
    used = tuple(dict.fromkeys(tools))
    if settings.learn == "off" or not used:
        return None
    found = embed(text) if text else None
    return Learning(
        turn=turn,
        tools=used,
        vector=np.asarray(found[1], np.float32).tobytes() if found else None,
        embedder_id=found[0] if found else None,
        text=text if settings.learn_keep_text else None,
        half_life=settings.learn_half_life,
        max_requests=settings.learn_max_requests,
        max_pairs=settings.learn_max_pairs,
    )


def learned_signals(
    store: BaseStore, allowed: Callable[[str], bool], settings: Settings
) -> SelectionSignals:
    """The store's learned signals (any store learns), or :class:`NoSignals` (learning off)."""
    from tooltray.memory.retrieval.past import NoSignals

    if settings.learn == "off":
        return NoSignals()
    return StoreSignals(store, allowed, settings.learn_half_life)
