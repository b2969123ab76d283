"""The agent loop: one model turn with the trinket, on the native and the text path."""

from tooltray.memory.agent.calls import CallRunner, ToolCall
from tooltray.memory.agent.loop import Agent, TurnResult
from tooltray.memory.agent.textcalls import TextCall, parse_tool_calls
from tooltray.tools.errors import ModelError

__all__ = [
    "Agent",
    "CallRunner",
    "ModelError",
    "TextCall",
    "ToolCall",
    "TurnResult",
    "parse_tool_calls",
]
