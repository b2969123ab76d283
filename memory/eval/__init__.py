"""Offline evaluation of what a store recorded: recall of the tools each turn needed."""

from tooltray.memory.eval.recall import RecallReport, evaluate_store, replay_session

__all__ = [
    "RecallReport",
    "evaluate_store",
    "replay_session",
]
