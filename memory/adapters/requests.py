"""Provider requests driven through the trinket: a ``load_tools`` answer in the provider's own
form, and a request sent again one reveal mode lower when the provider refuses the current one.

They call the trinket's public API, so they live with its clients, not in the core's prompt module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from tooltray.memory.core.prompt import (
    Message,
    PromptView,
    defers,
    refuses_addition,
    refuses_deferral,
)
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.metatools.meta_tools import LOAD_TOOLS
from tooltray.tools.deferred import search_answer
from tooltray.tools.spec import ToolSpec

T = TypeVar("T")


def load_answer(
    trinket: ToolLoaderTrinket, session_id: str, call_id: str, arguments: Any
) -> Message:
    """Run the model's ``load_tools`` (on Responses: its ``tool_search``) and return the entry
    to append to the history, answering the way the session's provider loads tools.

    Anthropic: a tool message whose content is the ``tool_reference`` blocks (it becomes the
    ``tool_result``); Responses: the ``tool_search_output`` item; elsewhere, or once the session
    is bridged, a tool message with the answer text (the ``call_tool`` bridge reaches the tools).
    """
    before = set(trinket.loaded(session_id))
    text, _ = trinket.run_meta(session_id, LOAD_TOOLS, arguments)
    path, meta = trinket.settings.path, trinket.state(session_id).snapshot.meta
    if not defers(path, trinket.settings.reveal, meta):
        return {"role": "tool", "tool_call_id": call_id, "content": text}
    answer = search_answer(path, call_id, added_specs(trinket, session_id, before), text)
    if path == "responses":
        return answer
    return {"role": "tool", "tool_call_id": call_id, "content": answer["content"]}


def added_specs(trinket: ToolLoaderTrinket, session_id: str, before: set[str]) -> list[ToolSpec]:
    """The tools loaded since ``before``, as the catalog declares them: what a search answers."""
    added = [n for n in trinket.loaded(session_id) if n not in before]
    return [s for s in map(trinket.registry.get, added) if s is not None]


def send_revealing(
    trinket: ToolLoaderTrinket,
    session_id: str,
    history: Sequence[Message],
    send: Callable[[dict[str, Any]], T],
) -> T:
    """Prepare the turn, build its request and ``send`` it; a provider that refuses how the
    session reveals steps it down one mode (``tool_addition`` -> the ``load_tools`` exchange ->
    the ``call_tool`` bridge, :func:`degrade`) and the turn is sent again, never failed."""
    view = trinket.prepare(session_id, history)
    for _ in range(2):  # at most two steps down, then the bridge's request goes as it is
        try:
            return send(view.request(history))
        except Exception as exc:
            if not degrade(trinket, session_id, view, exc):
                raise
        view = trinket.prepare(session_id, history)
    return send(view.request(history))


def degrade(
    trinket: ToolLoaderTrinket, session_id: str, view: PromptView, exc: BaseException
) -> bool:
    """Step the session down one reveal mode when ``exc`` is the provider refusing the one its
    request used (``tool_addition``, else deferral); ``False`` for any other failure."""
    if view.addition and refuses_addition(exc):
        trinket.degrade_reveal(session_id, str(exc), to="exchange")
        return True
    if view.deferring and refuses_deferral(exc):
        trinket.degrade_reveal(session_id, str(exc))
        return True
    return False
