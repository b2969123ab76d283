"""tooltray for the OpenAI Agents SDK (``pip install "tooltray[openai-agents]"``).

The SDK offers the model whatever ``Agent.tools`` holds, and runs only a call whose name is in
that same list. So the agent gets every allowed tool plus the meta-tools (any allowed tool the
model names still runs, then is loaded as an escape), and :class:`TrayModel`, wrapping the SDK's
own model class, narrows what each request offers to the trinket's current set. A tool loaded
through ``load_tools`` is therefore offered on the very next model request. ``tool-used`` and
``turn-completed`` come from the SDK's run hooks (:class:`TrayHooks`).

With ``reveal = "append"`` (the default) a request offers exactly the view's ``tools=`` (the
meta-tools, ``call_tool`` and the prefix), the same until the next boundary; the tools revealed
later reach the model in the ``load_tools`` answer or in a note woven before their turn's user
item, and run when called through ``call_tool`` (reported as the tool it ran) or by name.

Example:
    >>> tray = AgentsTray(trinket, "s1")                                   # doctest: +SKIP
    >>> agent = tray.agent(OpenAIChatCompletionsModel("m", AsyncOpenAI()))  # doctest: +SKIP
    >>> await Runner.run(agent, "Weather in Oslo?", hooks=tray.hooks)       # doctest: +SKIP
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from agents import (
    Agent,
    FunctionTool,
    Model,
    ModelResponse,
    RunContextWrapper,
    RunHooks,
    Tool,
)
from agents.items import TResponseStreamEvent
from agents.tool_context import ToolContext

from tooltray.memory.adapters.common import (
    emit_completed,
    emit_used,
    run_meta,
    run_registry_tool,
    user_messages,
)
from tooltray.memory.core.prompt import PromptView, weave
from tooltray.memory.metatools.meta_tools import CALL_TOOL, bridge_spec
from tooltray.tools.errors import MetaToolArgumentError
from tooltray.tools.spec import ToolSpec

if TYPE_CHECKING:
    from tooltray.memory.core.trinket import ToolLoaderTrinket

# One model request's parameters (get_response and stream_response take the same ones).
_REQUEST = inspect.signature(Model.get_response)


def input_user_texts(items: str | Sequence[Any]) -> list[Any]:
    """The user contents of an SDK input (a string, or Responses-style items), oldest first."""
    if isinstance(items, str):
        return [items]
    return [_field(item, "content") for item in items if _field(item, "role") == "user"]


def _field(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def woven(items: str | Sequence[Any], notes: Sequence[tuple[int, str]]) -> str | list[Any]:
    """The SDK input with each reveal note before its turn's user item (as ``view.messages``
    does for chat messages); items the note does not touch are passed as they are."""
    if not notes:
        return items if isinstance(items, str) else list(items)
    listed = [{"role": "user", "content": items}] if isinstance(items, str) else list(items)
    if not all(isinstance(item, dict) for item in listed):
        return listed  # an SDK object item: left alone rather than half-converted
    return weave(listed, dict(notes))


class AgentsTray:
    """One session's tooltray bridge for the Agents SDK: tools, model wrapper and run hooks.

    Args:
        trinket: the tool loader; its registry is the allow-listed set of runnable tools.
        session_id: the session every run of this tray belongs to.
    """

    def __init__(self, trinket: ToolLoaderTrinket, session_id: str) -> None:
        self.trinket = trinket
        self.session_id = session_id
        self.hooks = TrayHooks(self)
        self.turn = 0
        self._failed: set[str] = set()
        self._bridged: dict[str, str] = {}  # call_tool call id -> the tool it ran

    def start(self, messages: Sequence[dict[str, Any]] = ()) -> PromptView:
        """Session boundary: start the session, or resume a stored one (evicts idle tools)."""
        return self.trinket.start(self.session_id, messages)

    def agent(self, model: Model, name: str = "assistant", **options: Any) -> Agent[Any]:
        """An SDK ``Agent`` whose requests follow the trinket; ``options`` go to ``Agent``."""
        return Agent(name=name, model=TrayModel(model, self), tools=self.tools(), **options)

    def tools(self) -> list[Tool]:
        """The meta-tools, ``call_tool``, then every allowed tool, as SDK function tools (the SDK
        runs only what the agent holds; each request offers just the view's ``tools=``)."""
        specs = [*self.trinket.meta_tools(), bridge_spec(), *self.trinket.registry.allowed()]
        return [self._function_tool(spec) for spec in specs]

    def view(self, items: str | Sequence[Any]) -> PromptView:
        """Prepare the trinket for one model request of this session."""
        texts = input_user_texts(items)
        view = self.trinket.prepare(self.session_id, user_messages(texts))
        self.turn = view.turn
        return view

    def managed(self) -> set[str]:
        """Names tooltray decides on: the meta-tools and every registered tool (even denied)."""
        specs = [*self.trinket.meta_tools(), *self.trinket.registry.all_tools()]
        return {spec.name for spec in specs} | {CALL_TOOL}

    def _function_tool(self, spec: ToolSpec) -> FunctionTool:
        async def invoke(ctx: ToolContext[Any], raw: str) -> str:
            return await self._invoke(ctx, spec.name, raw)

        return FunctionTool(
            name=spec.name,
            description=spec.description,
            params_json_schema=spec.parameters,
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )

    async def _invoke(self, ctx: ToolContext[Any], name: str, raw: str) -> str:
        if name == CALL_TOOL:
            try:
                name, raw = self.trinket.unwrap(name, raw)
            except MetaToolArgumentError as exc:
                return f"Error: {exc}"
            self._bridged[ctx.tool_call_id] = name
        if self.trinket.is_meta(name):
            return run_meta(self.trinket, self.session_id, name, raw)
        text, ok = await run_registry_tool(self.trinket, self.session_id, name, raw)
        if not ok:
            self._failed.add(ctx.tool_call_id)
        return text

    def used(self, ctx: RunContextWrapper[Any], name: str) -> None:
        """Report a finished real tool call as ``tool-used`` (meta-tools are not reported); a
        ``call_tool`` call counts as a use of the tool it ran."""
        call_id = getattr(ctx, "tool_call_id", None)
        if name == CALL_TOOL:
            name = self._bridged.pop(str(call_id), CALL_TOOL)
        if self.trinket.is_meta(name) or name == CALL_TOOL:
            return
        ok = call_id not in self._failed
        self._failed.discard(str(call_id))
        emit_used(self.session_id, name, self.turn, ok)


class TrayHooks(RunHooks[Any]):
    """Run hooks that tell tooltray what the SDK did: ``tool-used`` and ``turn-completed``."""

    def __init__(self, tray: AgentsTray) -> None:
        self.tray = tray

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object
    ) -> None:
        """A tool finished: a real one counts as used (an unloaded one is loaded as an escape)."""
        self.tray.used(context, tool.name)

    async def on_agent_end(self, context: Any, agent: Agent[Any], output: Any) -> None:
        """The run produced its final output: the user turn is complete."""
        emit_completed(self.tray.session_id, self.tray.turn)


class TrayModel(Model):
    """The SDK's own model, offered only the trinket's current tools on each request.

    Args:
        inner: the model that talks to the server (``OpenAIChatCompletionsModel`` or another).
        tray: the session bridge whose trinket decides the tools.
    """

    def __init__(self, inner: Model, tray: AgentsTray) -> None:
        self.inner = inner
        self.tray = tray

    def _narrow(
        self, view: PromptView, instructions: str | None, tools: list[Tool]
    ) -> tuple[str | None, list[Tool]]:
        """The view's ``tools=`` in its order (revealed tools stay out), then the caller's own."""
        by_name = {t.name: t for t in tools}
        managed = self.tray.managed()
        offered = [by_name[spec.name] for spec in view.specs if spec.name in by_name]
        offered += [t for t in tools if t.name not in managed]  # the caller's own SDK tools
        parts = [text for text in (instructions, view.system_prefix) if text]
        return "\n\n".join(parts) or None, offered

    def _offer(self, args: tuple[Any, ...], kw: dict[str, Any]) -> inspect.BoundArguments:
        """The request with its instructions and tools narrowed to the trinket's current set,
        and the reveal notes woven into its input.

        The SDK passes a request's arguments by position to one method and by name to the other,
        so they are bound to :class:`Model`'s own signature rather than restated here.
        """
        bound = _REQUEST.bind_partial(self.inner, *args, **kw)
        given = bound.arguments
        view = self.tray.view(given["input"])
        instructions, tools = given["system_instructions"], given["tools"]
        given["system_instructions"], given["tools"] = self._narrow(view, instructions, tools)
        given["input"] = woven(given["input"], view.notes)
        return bound

    async def get_response(self, *args: Any, **kw: Any) -> ModelResponse:
        """Ask the inner model, offering the trinket's tools (arguments as the SDK gives them)."""
        bound = self._offer(args, kw)
        return await self.inner.get_response(*bound.args[1:], **bound.kwargs)

    def stream_response(self, *args: Any, **kw: Any) -> AsyncIterator[TResponseStreamEvent]:
        """Stream from the inner model, offering the trinket's tools."""
        bound = self._offer(args, kw)
        return self.inner.stream_response(*bound.args[1:], **bound.kwargs)
