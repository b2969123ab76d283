"""tooltray for pydantic-ai (``pip install "tooltray[pydantic-ai]"``): a wrapper toolset.

:class:`TrayToolset` wraps any toolset (function tools, MCP servers, a combination) and offers
the model, on each step, the meta-tools plus the trinket's loaded set, in the trinket's stable
order. Tools of the wrapped toolset that the registry does not know yet (an MCP server's, say)
join the registry's instance layer in ``bundle`` the first time they are listed, so selection and
``load_tools`` see them; tools outside the allow-list are never listed or run.

pydantic-ai only runs a call whose name it offered on that step, so an allowed tool the model
names while unloaded gets pydantic-ai's retry prompt and is loaded (as an escape) for the next
step, where the repeated call runs. ``tool-used`` is emitted after each real call; the turn is
reported complete when the run leaves the toolset, or at the latest when the next turn starts.

With ``reveal = "append"`` (the default) each step offers exactly the view's ``tools=`` (the
meta-tools, ``call_tool`` and the prefix), the same until the next boundary. A revealed tool is
listed in the ``load_tools`` answer, or (tooltray's own reveals) in a note that
:meth:`TrayToolset.reveals`, a capability, weaves before its turn's user prompt in each request;
the model runs it through ``call_tool``, checked by the tool's own argument validator. By name it
is not offered, so pydantic-ai answers with its unknown-tool retry, which names ``call_tool``.

Example:
    >>> tray = TrayToolset(FunctionToolset([add, multiply]), trinket, "s1")  # doctest: +SKIP
    >>> agent = Agent(OpenAIChatModel("m", provider=provider), toolsets=[tray])  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool
from pydantic_core import SchemaValidator, ValidationError, core_schema

from tooltray.memory.adapters.common import (
    emit_completed,
    emit_used,
    run_meta,
    shorten,
    user_messages,
)
from tooltray.memory.agent.calls import argument_problem
from tooltray.memory.core.prompt import PromptView
from tooltray.memory.metatools.meta_tools import CALL_TOOL, LOAD_TOOLS, bridge_spec
from tooltray.tools.errors import MetaToolArgumentError
from tooltray.tools.render import render_line
from tooltray.tools.spec import Bundle, ToolSpec, decode_arguments

if TYPE_CHECKING:
    from tooltray.memory.core.trinket import ToolLoaderTrinket

ARGS = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))
Tools = dict[str, ToolsetTool[Any]]


@dataclass
class Progress:
    """The turn a session is on and the last turn reported complete (shared by run copies)."""

    turn: int = 0
    done: int = 0


def user_texts(ctx: RunContext[Any]) -> list[Any]:
    """The user prompts of the run's history, oldest first, with the current prompt last."""
    texts = [
        part.content
        for message in ctx.messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    ]
    if ctx.prompt is not None and (not texts or texts[-1] != ctx.prompt):
        texts.append(ctx.prompt)
    return [text if isinstance(text, str) else str(text) for text in texts]


def woven(messages: list[ModelMessage], notes: Mapping[int, str]) -> list[ModelMessage]:
    """``messages`` with each note before the text of its turn's user prompt (turn ``k``: the
    ``k``-th user prompt, as :func:`user_texts` counts them); changed requests are copies."""
    out: list[ModelMessage] = []
    turn = 0
    for message in messages:
        if isinstance(message, ModelRequest):
            message, turn = _noted_request(message, notes, turn)
        out.append(message)
    return out


def _noted_request(
    request: ModelRequest, notes: Mapping[int, str], turn: int
) -> tuple[ModelRequest, int]:
    """``request`` with its user prompts' notes, and the turn its last user prompt was."""
    parts = []
    for part in request.parts:
        if isinstance(part, UserPromptPart):
            turn += 1
            part = _noted(part, notes.get(turn))
        parts.append(part)
    return (replace(request, parts=parts) if parts != request.parts else request), turn


def _noted(part: UserPromptPart, note: str | None) -> UserPromptPart:
    if not note:
        return part
    content = part.content
    text = f"{note}\n\n{content}" if isinstance(content, str) else [note, *content]
    return replace(part, content=text)


def last_calls(ctx: RunContext[Any]) -> list[str]:
    """Tool names the model called in its latest response."""
    for message in reversed(ctx.messages):
        if isinstance(message, ModelResponse):
            return [part.tool_name for part in message.parts if isinstance(part, ToolCallPart)]
    return []


@dataclass
class TrayToolset(WrapperToolset[Any]):
    """A toolset whose tools per step are the meta-tools plus the trinket's loaded set.

    Args:
        wrapped: the toolset holding the real tools (and running them).
        trinket: the tool loader; its registry's allow-list filters the wrapped tools.
        session_id: the session this toolset serves.
        bundle: the bundle for wrapped tools the registry does not know (default: their own).
    """

    trinket: ToolLoaderTrinket = field(kw_only=True)
    session_id: str = field(kw_only=True)
    bundle: str | None = field(default=None, kw_only=True)
    progress: Progress = field(default_factory=Progress, kw_only=True)

    def start(self, messages: list[dict[str, Any]] | None = None) -> PromptView:
        """Session boundary: start the session, or resume a stored one (evicts idle tools)."""
        return self.trinket.start(self.session_id, messages or [])

    async def get_tools(self, ctx: RunContext[Any]) -> Tools:
        """The meta-tools and the loaded wrapped tools, in the trinket's order."""
        inner = await super().get_tools(ctx)
        self._register(inner)
        allowed = {n: t for n, t in inner.items() if self.trinket.registry.is_allowed(n)}
        self._load_escapes(ctx, allowed)
        view = self.view(ctx)
        own = [*self.trinket.meta_tools(), bridge_spec()]
        meta = {spec.name: self._meta_tool(spec) for spec in own}
        offered = {**meta, **allowed}
        return {s.name: offered[s.name] for s in view.specs if s.name in offered}

    async def get_instructions(self, ctx: RunContext[Any]) -> Any:
        """The trinket's stable prefix (instructions and bundle menu), then the wrapped ones."""
        own = self.view(ctx).system_prefix
        rest = await super().get_instructions(ctx)
        extra = rest if isinstance(rest, list) else [rest] if rest else []
        return [own, *extra] if own else rest

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Run a meta-tool through the trinket, or a real tool through the wrapped toolset."""
        if name == CALL_TOOL:
            return await self._bridge(tool_args, ctx)
        if self.trinket.is_meta(name):
            return run_meta(self.trinket, self.session_id, name, tool_args)
        try:
            result = await super().call_tool(name, tool_args, ctx, tool)
        except Exception:
            emit_used(self.session_id, name, self.progress.turn, False)
            raise
        emit_used(self.session_id, name, self.progress.turn, True)
        return (
            shorten(self.trinket, self.session_id, name, result)
            if isinstance(result, str)
            else result
        )

    async def _bridge(self, raw: dict[str, Any], ctx: RunContext[Any]) -> Any:
        """``call_tool``: the named tool runs as a direct call would (allowed wrapped tools
        only), once its arguments pass its own validator (pydantic-ai checked only the
        bridge's free-form ones)."""
        try:
            name, inner = self.trinket.unwrap(CALL_TOOL, raw)
        except MetaToolArgumentError as exc:
            return f"Error: {exc}"
        if self.trinket.is_meta(name):
            return run_meta(self.trinket, self.session_id, name, inner)
        tool = (await self.wrapped.get_tools(ctx)).get(name)
        if tool is None or not self.trinket.registry.is_allowed(name):
            return f"Error: there is no tool {name!r} to call here; load_tools finds tools."
        arguments = self._checked(name, tool, inner)
        if isinstance(arguments, str):
            return arguments
        return await self.call_tool(name, arguments, ctx, tool)

    def _checked(self, name: str, tool: ToolsetTool[Any], raw: Any) -> dict[str, Any] | str:
        """The validated arguments, or the error text the model can act on."""
        decoded = decode_arguments(raw)
        spec = self.trinket.registry.get(name)
        bad = argument_problem(spec, decoded) if spec is not None else None
        if bad is not None:
            return bad
        try:
            if not decoded.problem:
                return dict(tool.args_validator.validate_python(decoded.value))
            problem = decoded.problem
        except ValidationError as exc:
            problem = str(exc).splitlines()[0]
        shape = f" Call it as {render_line(spec)}" if spec is not None else ""
        return f"Error: bad arguments for {name}: {problem}.{shape}"

    def reveals(self) -> TrayReveals:
        """The capability that puts tooltray's reveal notes before their turns' user prompts
        (``Agent(..., toolsets=[tray], capabilities=[tray.reveals()])``)."""
        return TrayReveals(self)

    async def __aexit__(self, *args: Any) -> bool | None:
        """The run leaves the toolset: its user turn is complete."""
        self._complete()
        return await super().__aexit__(*args)

    def view(self, ctx: RunContext[Any]) -> PromptView:
        """Prepare the trinket for this step (a new user turn first completes the previous)."""
        texts = user_texts(ctx)
        if len(texts) > self.progress.turn:
            self._complete()
        view = self.trinket.prepare(self.session_id, user_messages(texts))
        self.progress.turn = view.turn
        return view

    def _complete(self) -> None:
        if self.progress.turn > self.progress.done:
            self.progress.done = self.progress.turn
            emit_completed(self.session_id, self.progress.turn)

    def _register(self, inner: Tools) -> None:
        registry = self.trinket.registry
        for name, tool in inner.items():
            if registry.get(name) is None and not self.trinket.is_meta(name):
                registry.register(self._spec(tool.tool_def, tool.toolset))

    def _spec(self, tool_def: ToolDefinition, toolset: AbstractToolset[Any]) -> ToolSpec:
        bundle = self.bundle or toolset.id
        if bundle and bundle not in {b.name for b in self.trinket.registry.bundles()}:
            self.trinket.registry.add_bundle(Bundle(name=bundle, description=toolset.label))
        return ToolSpec(
            name=tool_def.name,
            description=tool_def.description or "",
            parameters=tool_def.parameters_json_schema,
            bundle=bundle,
            source="pydantic-ai",
        )

    def _load_escapes(self, ctx: RunContext[Any], allowed: Tools) -> None:
        loaded = set(self.trinket.loaded(self.session_id))
        missed = [name for name in last_calls(ctx) if name in allowed and name not in loaded]
        if missed:
            run_meta(self.trinket, self.session_id, LOAD_TOOLS, {"tools": missed})

    def _meta_tool(self, spec: ToolSpec) -> ToolsetTool[Any]:
        tool_def = ToolDefinition(
            name=spec.name, description=spec.description, parameters_json_schema=spec.parameters
        )
        return ToolsetTool(toolset=self, tool_def=tool_def, max_retries=1, args_validator=ARGS)


@dataclass
class TrayReveals(AbstractCapability[Any]):
    """Weaves the view's reveal notes into each model request (the request's copy only: the
    run's history keeps the user's own text, which is what selection reads)."""

    tray: TrayToolset

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """The request with the notes of the session's reveals in place."""
        notes = dict(self.tray.view(ctx).notes)
        if not notes:
            return request_context
        return replace(request_context, messages=woven(request_context.messages, notes))
