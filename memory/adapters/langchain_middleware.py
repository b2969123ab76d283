"""tooltray for LangChain / LangGraph agents (``pip install "tooltray[langchain]"``).

:class:`TrayMiddleware` is a LangChain agent middleware. ``create_agent`` runs only the tools it
was given, so the middleware holds the meta-tools, ``call_tool`` and every allowed tool of the
trinket's registry (``middleware.tools``: any allowed tool the model names still runs, then is
loaded as an escape), and its ``wrap_model_call`` narrows each model request to the trinket's
current set with ``request.override(tools=...)``, after ``prepare`` with the conversation. A tool
loaded through ``load_tools`` is therefore offered on the very next model call. Real tools run
through the registry's executors; ``tool-used`` is emitted per call and ``turn-completed`` when
the agent finishes its run (``after_agent``).

With ``reveal = "append"`` (the default) each call offers exactly the view's ``tools=``, the same
until the next boundary; a tool revealed later is listed in the ``load_tools`` answer or in a note
put before its turn's user message, and runs through ``call_tool`` or by name.

Example:
    >>> tray = TrayMiddleware(trinket, "s1")                               # doctest: +SKIP
    >>> agent = create_agent(ChatOpenAI(model="m"), middleware=[tray])    # doctest: +SKIP
    >>> agent.invoke({"messages": [{"role": "user", "content": "Hi"}]})   # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool, StructuredTool

from tooltray.memory.adapters.common import emit_completed, run_call, user_messages
from tooltray.memory.core.prompt import PromptView
from tooltray.memory.metatools.meta_tools import CALL_TOOL, bridge_spec
from tooltray.tools.spec import ToolSpec

if TYPE_CHECKING:
    from tooltray.memory.core.trinket import ToolLoaderTrinket

Handler = Callable[[ModelRequest[Any]], ModelResponse[Any]]
AsyncHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]


def run_sync(work: Coroutine[Any, Any, str]) -> str:
    """Run ``work`` to its end from sync code: here, or on a thread of its own when this thread
    already runs an event loop (``agent.invoke`` called from async code)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, work).result()


def human_texts(messages: Sequence[AnyMessage]) -> list[Any]:
    """The user messages' contents, oldest first (what ``prepare`` counts turns and reads)."""
    return [m.content for m in messages if isinstance(m, HumanMessage)]


def woven(messages: Sequence[AnyMessage], notes: Mapping[int, str]) -> list[AnyMessage]:
    """``messages`` with each note before its turn's user message (turn ``k``: the ``k``-th
    human message); a noted message is a copy, so the agent's state keeps the user's text."""
    out: list[AnyMessage] = []
    turn = 0
    for message in messages:
        if isinstance(message, HumanMessage):
            turn += 1
            note = notes.get(turn)
            if note:
                message = message.model_copy(update={"content": _noted(note, message.content)})
        out.append(message)
    return out


def _noted(note: str, content: Any) -> Any:
    if isinstance(content, str):
        return f"{note}\n\n{content}"
    return [{"type": "text", "text": note}, *content]


def tool_name(tool: BaseTool | dict[str, Any]) -> str:
    """A request tool's name: a ``BaseTool``'s, or a provider dict's (``function.name``)."""
    if isinstance(tool, BaseTool):
        return tool.name
    inner = tool.get("function", tool)
    return str(inner.get("name", "")) if isinstance(inner, dict) else ""


class TrayMiddleware(AgentMiddleware[Any, Any, Any]):
    """One session's tooltray middleware: per-call tools, meta-tool routing and signals.

    Args:
        trinket: the tool loader; its registry is the allow-listed set of runnable tools.
        session_id: the session every run of this agent belongs to.
    """

    def __init__(self, trinket: ToolLoaderTrinket, session_id: str) -> None:
        super().__init__()
        self.trinket = trinket
        self.session_id = session_id
        self.turn = 0
        self.done = 0
        specs = [*trinket.meta_tools(), bridge_spec(), *trinket.registry.allowed()]
        self.tools = [self._tool(spec) for spec in specs]

    def start(self, messages: Sequence[dict[str, Any]] = ()) -> PromptView:
        """Session boundary: start the session, or resume a stored one (evicts idle tools)."""
        return self.trinket.start(self.session_id, messages)

    def wrap_model_call(self, request: ModelRequest[Any], handler: Handler) -> ModelResponse[Any]:
        """Call the model with the trinket's current tools, prefix and reveal notes."""
        return handler(self.narrowed(request))

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: AsyncHandler
    ) -> ModelResponse[Any]:
        """The async :meth:`wrap_model_call`."""
        return await handler(self.narrowed(request))

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """The agent finished its run: the user turn is complete."""
        self._complete()
        return None

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """The async :meth:`after_agent`."""
        self._complete()
        return None

    def narrowed(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """``request`` offering the view's ``tools=`` in order, then the caller's own tools;
        the system message is the stable prefix with the caller's own text in it."""
        view = self.trinket.prepare(self.session_id, user_messages(human_texts(request.messages)))
        self.turn = view.turn
        by_name = {tool_name(t): t for t in request.tools}
        managed = self.managed()
        tools = [by_name[s.name] for s in view.specs if s.name in by_name]
        tools += [t for t in request.tools if tool_name(t) not in managed]
        theirs = [request.system_message.text] if request.system_message is not None else []
        system = SystemMessage(content=view.system_text(theirs))
        messages = woven(request.messages, dict(view.notes))
        return request.override(tools=tools, system_message=system, messages=messages)

    def managed(self) -> set[str]:
        """Names tooltray decides on: the meta-tools and every registered tool (even denied)."""
        specs = [*self.trinket.meta_tools(), *self.trinket.registry.all_tools()]
        return {spec.name for spec in specs} | {CALL_TOOL}

    def _complete(self) -> None:
        if self.turn > self.done:
            self.done = self.turn
            emit_completed(self.session_id, self.turn)

    def _tool(self, spec: ToolSpec) -> StructuredTool:
        async def arun(**arguments: Any) -> str:
            return await self.invoke(spec.name, arguments)

        def run(**arguments: Any) -> str:
            return run_sync(self.invoke(spec.name, arguments))

        return StructuredTool.from_function(
            func=run,
            coroutine=arun,
            name=spec.name,
            description=spec.description,
            args_schema=spec.parameters,
            infer_schema=False,
        )

    async def invoke(self, name: str, arguments: Any) -> str:
        """Run one call the model made (see :func:`~tooltray.memory.adapters.common.run_call`)."""
        return await run_call(self.trinket, self.session_id, name, arguments, self.turn)
