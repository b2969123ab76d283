"""tooltray for Google ADK agents (``pip install "tooltray[adk]"``).

:class:`AdkTray` is an ADK toolset (``LlmAgent(tools=[tray])``). ADK asks each toolset for its
tools before every model call (``get_tools``), so every call offers the trinket's current set:
the meta-tools, ``call_tool`` and the session's tools, in the trinket's stable order. With
``reveal = "prefix"`` a tool loaded through ``load_tools`` joins the very next model call of the
same run; with ``"append"`` (the default) the offer stays the same until the next boundary and a
revealed tool is listed in the ``load_tools`` answer or in a note before its turn's user message.

ADK runs a call only when its name is in the step's ``tools_dict``; the toolset's
``process_llm_request`` puts the meta-tools, ``call_tool`` and every other allowed tool there
without a declaration, so an allowed tool the model names while unloaded still runs (and is
loaded as an escape) and a denied one never does. The same hook adds the trinket's stable prefix
to the system instruction and weaves the reveal notes into the request's copy of the messages.

Meta-tools run through the trinket, real tools through the registry's executors. ``tool-used``
is emitted per call; ``turn-completed`` when the run ends (``tray.agent`` passes
``tray.after_agent`` as the agent's ``after_agent_callback``), or at the latest when the next
user turn starts. One agent serves many ADK sessions, so each is its own tooltray session (named
by its id) unless a fixed ``session_id`` is given.

Example:
    >>> tray = AdkTray(trinket)  # each ADK session is a tooltray session  # doctest: +SKIP
    >>> agent = tray.agent(OpenAILlm(model="m"))  # LlmAgent(tools=[tray], ...)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.readonly_context import ReadonlyContext
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from tooltray.memory.adapters.common import emit_completed, run_call, user_messages
from tooltray.memory.core.prompt import PromptView
from tooltray.memory.metatools.meta_tools import bridge_spec
from tooltray.tools.spec import ToolSpec

if TYPE_CHECKING:
    from tooltray.memory.core.trinket import ToolLoaderTrinket


def content_text(content: types.Content | None) -> str:
    """The text parts of ``content`` joined (empty for tool calls and results)."""
    if content is None or not content.parts:
        return ""
    return "\n".join(part.text for part in content.parts if part.text and not part.thought)


def user_texts(ctx: ReadonlyContext) -> list[str]:
    """The session's user messages, oldest first (the runner stores the new one before the run)."""
    texts = [content_text(e.content) for e in ctx.session.events if e.author == "user"]
    return [text for text in texts if text]


def woven(contents: Sequence[types.Content], notes: Mapping[int, str]) -> list[types.Content]:
    """``contents`` with each note before its turn's user message (turn ``k``: the ``k``-th user
    content with text); a noted content is a copy, so the session keeps the user's text."""
    out: list[types.Content] = []
    turn = 0
    for content in contents:
        if content.role == "user" and content_text(content):
            turn += 1
            note = notes.get(turn)
            if note:
                parts = [types.Part(text=note), *(content.parts or [])]
                content = content.model_copy(update={"parts": parts})
        out.append(content)
    return out


@dataclass
class Progress:
    """One session's place: the turn it is on, the last turn reported complete, its last view."""

    turn: int = 0
    done: int = 0
    view: PromptView | None = None


class TrayTool(BaseTool):
    """One tool as ADK sees it: the spec's declaration; a call goes to the toolset."""

    def __init__(self, tray: AdkTray, spec: ToolSpec) -> None:
        super().__init__(name=spec.name, description=spec.description)
        self.tray = tray
        self.spec = spec

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.spec.name,
            description=self.spec.description,
            parameters_json_schema=self.spec.parameters,
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Run the call through the trinket (meta-tools) or the registry (real tools)."""
        return await self.tray.invoke(self.tray.session_of(tool_context), self.name, args)


class AdkTray(BaseToolset):
    """tooltray as an ADK toolset: per-step tools, meta-tool routing and signals.

    Args:
        trinket: the tool loader; its registry is the allow-listed set of runnable tools.
        session_id: the tooltray session every run belongs to; by default each ADK session is
            its own tooltray session (named by its id), as one agent serves many sessions.
    """

    def __init__(self, trinket: ToolLoaderTrinket, session_id: str | None = None) -> None:
        super().__init__()
        # The set changes between steps of one run (load_tools): no per-invocation cache, as
        # ADK's own SkillToolset does for its mid-turn reloads.
        self._use_invocation_cache = False
        self.trinket = trinket
        self.session_id = session_id
        self.progress: dict[str, Progress] = {}
        self._tools: dict[str, TrayTool] = {}

    def session_of(self, ctx: ReadonlyContext) -> str:
        """The tooltray session of ``ctx``'s run: the fixed one, else the ADK session's id."""
        return self.session_id or ctx.session.id

    def start(
        self, messages: Sequence[dict[str, Any]] = (), session_id: str | None = None
    ) -> PromptView:
        """Session boundary: start the session (``session_id``, else the fixed one), or resume
        a stored one (evicts idle tools)."""
        return self.trinket.start(session_id or self.session_id or "", messages)

    def agent(self, model: BaseLlm | str, name: str = "assistant", **options: Any) -> LlmAgent:
        """An ``LlmAgent`` with this toolset first and :meth:`after_agent` as its callback;
        ``options`` go to ``LlmAgent`` (its own ``tools`` come after tooltray's)."""
        tools = [self, *options.pop("tools", [])]
        return LlmAgent(
            name=name, model=model, tools=tools, after_agent_callback=self.after_agent, **options
        )

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        """The trinket's current set for this step, in its order (prepared with the session's
        user messages; a new user turn first completes the previous one)."""
        if readonly_context is None:  # a listing outside any session: the meta-tools
            return [self.tool(spec) for spec in self.trinket.meta_tools()]
        session = self.session_of(readonly_context)
        progress = self.progress.setdefault(session, Progress())
        texts = user_texts(readonly_context)
        if len(texts) > progress.turn:
            self._complete(session)
        view = self.trinket.prepare(session, user_messages(texts))
        progress.turn, progress.view = view.turn, view
        return [self.tool(spec) for spec in view.specs]

    async def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        """Make every allowed tool runnable (declared only when offered), add the stable prefix
        to the system instruction and weave the reveal notes into the request's messages."""
        progress = self.progress.get(self.session_of(tool_context))
        view = progress.view if progress is not None else None
        if progress is None or view is None:
            return
        progress.view = None  # this step's: the next one prepares its own
        offered = {spec.name for spec in view.specs}
        runnable = [*self.trinket.meta_tools(), bridge_spec(), *self.trinket.registry.allowed()]
        for spec in runnable:
            if spec.name not in offered:
                llm_request.tools_dict.setdefault(spec.name, self.tool(spec))
        if view.system_prefix:
            llm_request.append_instructions([view.system_prefix])
        if view.notes:
            llm_request.contents = woven(llm_request.contents, dict(view.notes))

    def after_agent(self, callback_context: CallbackContext) -> None:
        """``after_agent_callback``: the run ended, so the user turn is complete (and the
        session's place is forgotten: the next run counts its turns afresh)."""
        session = self.session_of(callback_context)
        self._complete(session)
        self.progress.pop(session, None)

    def tool(self, spec: ToolSpec) -> TrayTool:
        """The ADK tool for ``spec`` (one per name, built on first use)."""
        if spec.name not in self._tools or self._tools[spec.name].spec != spec:
            self._tools[spec.name] = TrayTool(self, spec)
        return self._tools[spec.name]

    async def invoke(self, session: str, name: str, arguments: Any) -> str:
        """Run one call the model made (see :func:`~tooltray.memory.adapters.common.run_call`)."""
        turn = self.progress[session].turn if session in self.progress else 0
        return await run_call(self.trinket, session, name, arguments, turn)

    def _complete(self, session: str) -> None:
        progress = self.progress.get(session)
        if progress is not None and progress.turn > progress.done:
            progress.done = progress.turn
            emit_completed(session, progress.turn)
