"""A real agent loop over OpenAI Chat Completions, with tooltray managing the tools.

Before every model step the loop asks the trinket for the prompt (``prepare``), so a tool loaded
mid-turn is callable on the very next step. Two paths reach the model: ``openai`` sends the loaded
tools as ``tools=`` and reads native tool calls; ``text`` puts the tool block in the system
prompt and reads a JSON call out of the reply. Either way a call runs against the whole allowed
registry, and the loop tells tooltray what happened through the ``tool-used`` and
``turn-completed`` signals.

Example:
    >>> agent = Agent(trinket, OpenAI(base_url=url, api_key="x"), "my-model")  # doctest: +SKIP
    >>> result = agent.run_turn("s1", [], "What is 2 + 3?")                     # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tooltray.events import payloads as p
from tooltray.events import signals as sig
from tooltray.events.payloads import Usage
from tooltray.memory.agent.calls import CallRunner, ToolCall
from tooltray.memory.agent.textcalls import is_result_message, parse_tool_calls, result_message
from tooltray.memory.agent.usage import add, usage_of
from tooltray.memory.core.prompt import PromptView
from tooltray.memory.core.session import user_turn
from tooltray.tools.errors import ConfigError, ModelError, TooltrayError

if TYPE_CHECKING:
    from tooltray.memory.core.trinket import ToolLoaderTrinket

log = logging.getLogger("tooltray")
AGENT_PATHS = ("openai", "text")
Message = dict[str, Any]


@dataclass
class TurnResult:
    """One user turn, as it happened.

    Attributes:
        session_id: the session.
        turn: the session's turn number (number of user messages so far).
        answer: the model's final text (or a note saying the step limit was hit).
        messages: the messages this turn appended (user, assistant, tool results).
        calls: every tool call, in order, with what the model got back.
        views: the prompt view of each model step (tools offered, tokens, prefix hash).
        finished: ``False`` when ``max_steps`` ran out before a final answer.
    """

    session_id: str
    turn: int
    answer: str
    messages: list[Message] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    views: list[PromptView] = field(default_factory=list)
    finished: bool = True

    @property
    def steps(self) -> int:
        """How many model requests the turn took."""
        return len(self.views)

    @property
    def step_tokens(self) -> list[int]:
        """Tool tokens the model saw at each step."""
        return [v.tool_tokens for v in self.views]

    @property
    def eager_tokens(self) -> int:
        """Tool tokens had every allowed tool been exposed."""
        return self.views[-1].eager_tokens if self.views else 0

    @property
    def loaded(self) -> list[str]:
        """The tools visible on the last step."""
        return list(self.views[-1].loaded) if self.views else []


def choose_path(path: str | None, trinket_path: str) -> str:
    """The agent's path given the trinket's render path; mismatches are configuration errors."""
    chosen = path or ("text" if trinket_path == "text" else "openai")
    if chosen not in AGENT_PATHS:
        raise ConfigError(f"Agent path {chosen!r} is not supported: use one of {AGENT_PATHS}.")
    if (chosen == "text") != (trinket_path == "text"):
        raise ConfigError(
            f"Agent path {chosen!r} does not match the trinket's render path {trinket_path!r}: "
            f"build the trinket with Settings(path={'text' if chosen == 'text' else 'openai'!r})."
        )
    return chosen


class Agent:
    """A tool-using chat agent whose tools are chosen and kept by a trinket.

    Args:
        trinket: the tool loader (its registry is the allow-listed set of runnable tools).
        client: an ``openai.OpenAI`` client (any OpenAI-compatible server).
        model: the model name sent with every request.
        path: ``openai`` (native ``tools=``) or ``text``; ``None`` follows the trinket's settings.
        max_steps: model requests per user turn before the loop gives up.
        request_options: extra keyword arguments for ``chat.completions.create``.
    """

    def __init__(
        self,
        trinket: ToolLoaderTrinket,
        client: Any,
        model: str,
        *,
        path: str | None = None,
        max_steps: int = 8,
        request_options: dict[str, Any] | None = None,
    ) -> None:
        if max_steps < 1:
            raise ConfigError(f"max_steps must be at least 1, got {max_steps}.")
        self.trinket = trinket
        self.client = client
        self.model = model
        self.path = choose_path(path, trinket.settings.path)
        self.max_steps = max_steps
        self.request_options = dict(request_options or {})
        self.runner = CallRunner(trinket, native=self.path != "text")
        self._usage: Usage | None = None  # the provider's reported usage for the current turn

    @property
    def native(self) -> bool:
        """True when tools reach the model as ``tools=``."""
        return self.path != "text"

    def start(self, session_id: str, messages: Sequence[Message] = ()) -> PromptView:
        """Session boundary: start a new session or resume a stored one (evicts idle tools)."""
        try:
            return self.trinket.start(session_id, self._visible(messages))
        except TooltrayError as exc:
            log.error("tooltray start failed for session %s: %s", session_id, exc)
            return self._all_tools(session_id, messages)

    def run_conversation(
        self,
        session_id: str,
        user_messages: Sequence[str],
        *,
        messages: Sequence[Message] = (),
    ) -> list[TurnResult]:
        """Start (or resume) the session, then run one turn per user message."""
        history = list(messages)
        self.start(session_id, history)
        results = []
        for user in user_messages:
            result = self.run_turn(session_id, history, user)
            history += result.messages
            results.append(result)
        return results

    def run_turn(self, session_id: str, messages: Sequence[Message], user: str) -> TurnResult:
        """Run one user turn to a final answer (or ``max_steps``); ``messages`` is the history."""
        history = [*messages, {"role": "user", "content": user}]
        result = TurnResult(session_id, 0, "", messages=[history[-1]])
        self._usage = None
        for step in range(self.max_steps):
            view = self._prepare(session_id, history)
            result.views.append(view)
            result.turn = view.turn
            reply = self._ask(view, history, step)
            new, calls = self._digest(reply)
            history += new
            result.messages += new
            if not calls:
                result.answer = str(reply.get("content") or "")
                break
            for call_id, name, raw in calls:
                done = self.runner.run(session_id, view.turn, step, name, raw)
                result.calls.append(done)
                reply_msg = self._result_message(call_id, name, done.result)
                history.append(reply_msg)
                result.messages.append(reply_msg)
        else:
            result.finished = False
            result.answer = (
                f"[stopped: the model was still calling tools after {self.max_steps} steps; "
                "ask again or raise max_steps]"
            )
        self._completed(session_id, result.turn)
        return result

    # ----- one step --------------------------------------------------------------------------

    def _visible(self, history: Sequence[Message]) -> list[Message]:
        return [m for m in history if not is_result_message(m)]

    def _prepare(self, session_id: str, history: Sequence[Message]) -> PromptView:
        try:
            return self.trinket.prepare(session_id, self._visible(history))
        except TooltrayError as exc:
            log.error("tooltray prepare failed for session %s: %s", session_id, exc)
            return self._all_tools(session_id, history)

    def _all_tools(self, session_id: str, history: Sequence[Message]) -> PromptView:
        turn = user_turn(self._visible(history))
        return self.trinket.all_tools_view(session_id, turn)

    def _ask(self, view: PromptView, history: Sequence[Message], step: int) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": view.messages(history)}
        tools = view.tools("openai") if self.native else []
        if tools:
            request["tools"] = tools
        try:
            response = self.client.chat.completions.create(**request, **self.request_options)
        except Exception as exc:
            raise ModelError(
                f"The model request at step {step} failed: {type(exc).__name__}: {exc}. "
                "Check the server URL, the model name and that the server is running."
            ) from exc
        self._usage = add(self._usage, usage_of(response))
        if not getattr(response, "choices", None):
            raise ModelError(f"The model returned no choices at step {step}: {response!r:.200}")
        message = response.choices[0].message
        dump = message.model_dump(exclude_none=True) if hasattr(message, "model_dump") else message
        return dict(dump)

    def _digest(self, reply: dict[str, Any]) -> tuple[list[Message], list[tuple[str, str, Any]]]:
        content = reply.get("content")
        if not self.native:
            found = parse_tool_calls(content)
            calls = [(f"text_{i}", c.name, c.arguments) for i, c in enumerate(found)]
            return [{"role": "assistant", "content": content or ""}], calls
        native = [tc for tc in reply.get("tool_calls") or [] if tc.get("function")]
        message: Message = {"role": "assistant", "content": content}
        if native:
            message["tool_calls"] = [
                {"id": tc["id"], "type": "function", "function": tc["function"]} for tc in native
            ]
        calls = [
            (str(tc["id"]), str(tc["function"].get("name", "")), tc["function"].get("arguments"))
            for tc in native
        ]
        return [message], calls

    def _result_message(self, call_id: str, name: str, text: str) -> Message:
        if self.native:
            return {"role": "tool", "tool_call_id": call_id, "content": text}
        return result_message(name, text)

    def _completed(self, session_id: str, turn: int) -> None:
        try:
            done = p.TurnCompleted(turn=turn, usage=self._usage)
            sig.emit(sig.turn_completed, session_id, done)
        except TooltrayError as exc:
            log.error("tooltray turn-completed receiver failed for %s: %s", session_id, exc)
