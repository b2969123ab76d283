"""tooltray's retriever as the client-side tool search of a provider that defers tool schemas.

A :class:`NativeDeferral` fixes the session's selection at its start as the tools rendered in
full; every other allowed tool goes out deferred (``tooltray.tools.deferred``). When the model
calls the search tool, ``load_tools`` with the query runs through the trinket (the same hybrid
retrieval, bundle pull-in and allow-list), and the newly loaded tools are answered as
``tool_reference`` blocks (Anthropic) or a ``tool_search_output`` (OpenAI Responses). The
``tools=`` list never changes within the session, so loads keep the cached prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tooltray.memory.adapters.common import run_meta, user_messages
from tooltray.memory.adapters.requests import added_specs
from tooltray.memory.metatools.meta_tools import LOAD_TOOLS, READ_RESULT
from tooltray.tools.deferred import (
    check_deferred_path,
    complete_namespaces,
    render_deferred,
    search_answer,
)
from tooltray.tools.spec import ToolSpec

if TYPE_CHECKING:
    from tooltray.memory.core.trinket import ToolLoaderTrinket


class NativeDeferral:
    """One session rendered for provider-native deferral, searched by tooltray's retriever.

    Args:
        trinket: the tool loader (its registry's allow-list bounds what is rendered or found).
        session_id: the session.
        path: ``anthropic`` or ``responses``.
    """

    def __init__(self, trinket: ToolLoaderTrinket, session_id: str, path: str) -> None:
        self.trinket = trinket
        self.session_id = session_id
        self.path = check_deferred_path(path)
        self.visible: list[ToolSpec] = []

    def start(self, user_texts: Sequence[str]) -> list[dict[str, Any]]:
        """Select for the session's start and return its fixed ``tools=`` list."""
        view = self.trinket.start(self.session_id, user_messages(user_texts))
        keep = [s for s in view.specs if not self.trinket.is_meta(s.name) or s.name == READ_RESULT]
        self.visible = keep
        return self.tools()

    def tools(self) -> list[dict[str, Any]]:
        """``tools=`` for every request of the session: the start set in full, the rest deferred."""
        shown = {s.name for s in self.visible}
        rest = [s for s in self.trinket.registry.allowed() if s.name not in shown]
        return render_deferred(self.path, self.visible, rest, self.trinket.registry.bundles())

    def complete(self, items: Sequence[Any]) -> list[Any]:
        """Responses ``input`` items with the ``namespace`` of each deferred tool's replayed
        ``function_call`` filled in (the API refuses one without it)."""
        return complete_namespaces(items, self.tools())

    def search(self, call_id: str, query: str) -> dict[str, Any]:
        """Answer a search call with the tools tooltray's retriever loads for ``query``."""
        before = set(self.trinket.loaded(self.session_id))
        run_meta(self.trinket, self.session_id, LOAD_TOOLS, {"query": query})
        found = added_specs(self.trinket, self.session_id, before)
        return search_answer(self.path, call_id, found)
