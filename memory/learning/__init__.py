"""Learning from the agent's own history: co-use companions and past requests, in the store.

What a finished turn teaches (:func:`lesson`) is stored in the turn's transaction; what was
learned is read back by :class:`StoreSignals` (the planner's
:class:`~tooltray.memory.retrieval.selector.SelectionSignals`), shared by every process on the
store.
:func:`prune_history` drops old raw history without touching what was learned.
"""

from tooltray.memory.learning.lessons import RequestMatrix, StoreSignals, learned_signals, lesson
from tooltray.memory.learning.prune import PruneReport, prune_history

__all__ = [
    "PruneReport",
    "RequestMatrix",
    "StoreSignals",
    "learned_signals",
    "lesson",
    "prune_history",
]
