"""Each provider's request from one view, with tooltray's own reveals appended the provider's way.

The caller keeps one OpenAI-style history (``role`` user / assistant / tool / system); this module
lays it out as Anthropic ``messages`` or Responses ``input`` items. Where the session defers tools
natively, a turn's reveals become a synthetic exchange just before that turn's user message: an
assistant ``load_tools`` ``tool_use`` answered by a ``tool_result`` of ``tool_reference`` blocks
(Anthropic), or a client ``tool_search_call`` answered by a ``tool_search_output`` (Responses).
Nothing before the turn changes, so the cached prefix ends where the turn begins, and the ids are
derived from the turn so every later request repeats the same bytes.

Provider formats: Anthropic tool search (``defer_loading`` on a tool, ``tool_reference`` blocks
with ``tool_name`` inside a ``tool_result``) and OpenAI Responses tool search (``tool_search``
with ``execution: "client"``, ``namespace`` tools, ``tool_search_call`` / ``tool_search_output``
items), checked against the ``anthropic`` and ``openai`` SDKs' request types in the tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from tooltray.memory.core.reveal import defers, note
from tooltray.memory.metatools.meta_tools import LOAD_TOOLS
from tooltray.tools.deferred import search_answer, search_call
from tooltray.tools.render import canonical_json
from tooltray.tools.spec import ToolSpec, decode_arguments

if TYPE_CHECKING:
    from tooltray.memory.core.trinket import ToolLoaderTrinket

Reveals = Mapping[int, Sequence[ToolSpec]]
Message = dict[str, Any]
T = TypeVar("T")
REFUSAL_WORDS = ("defer_loading", "tool_reference", "tool_search", "namespace", "beta")
ADDITION_WORDS = ("tool_addition", "mid-conversation", "system message", "role: system", "beta")
ADDITION_BETA = "mid-conversation-tool-changes-2026-07-01"
"""The Anthropic beta that takes ``tool_addition`` blocks naming tools declared in ``tools``."""


def reveal_id(turn: int) -> str:
    """The synthetic reveal's call id: derived from the turn, so its bytes never change."""
    return f"tooltray_reveal_{turn}"


def reveal_exchange(
    path: str, turn: int, specs: Sequence[ToolSpec], addition: bool = False
) -> list[Message]:
    """Turn ``turn``'s reveal of ``specs`` as the provider's own search call and its answer.

    Anthropic: an assistant ``load_tools`` ``tool_use`` and a user ``tool_result`` holding one
    ``tool_reference`` block per tool, or (``addition``) one system message of ``tool_addition``
    blocks. Responses: a ``tool_search_call`` / ``tool_search_output``.
    """
    if not specs:
        return []
    call_id, names = reveal_id(turn), [s.name for s in specs]
    if addition and path == "anthropic":
        return [{"role": "system", "content": [_addition(n) for n in names]}]
    answer = search_answer(path, call_id, specs)
    if path != "anthropic":
        return [search_call(call_id, {"tools": names}), answer]
    use = {"type": "tool_use", "id": call_id, "name": LOAD_TOOLS, "input": {"tools": names}}
    return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [answer]}]


def _addition(name: str) -> dict[str, Any]:
    return {"type": "tool_addition", "tool": {"type": "tool_reference", "name": name}}


def anthropic_messages(
    history: Sequence[Message], reveals: Reveals, addition: bool = False
) -> list[Message]:
    """Anthropic ``messages`` from an OpenAI-style history (leading system messages removed).

    Tool calls become ``tool_use`` blocks, tool messages ``tool_result`` blocks in a user
    message, later system messages user text; consecutive messages of one role are merged, since
    the roles must alternate and a ``tool_result`` must open its user message.
    """
    out: list[Message] = []
    turn = 0
    for message in history:
        if message.get("role") == "user":
            turn += 1
            for extra in reveal_exchange("anthropic", turn, reveals.get(turn, ()), addition):
                _push(out, extra["role"], extra["content"])
        _push(out, *_anthropic(message))
    return out


def _anthropic(message: Message) -> tuple[str, list[Any]]:
    role = str(message.get("role"))
    if role == "tool":
        content = message.get("content")
        result = {"type": "tool_result", "tool_use_id": str(message.get("tool_call_id"))}
        return "user", [{**result, "content": _blocks(content) or content or ""}]
    blocks = _blocks(message.get("content"))
    if role != "assistant":
        return "user", blocks
    return role, blocks + [_tool_use(call) for call in message.get("tool_calls") or ()]


def _tool_use(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function") or {}
    arguments = decode_arguments(function.get("arguments")).value
    return {
        "type": "tool_use",
        "id": str(call.get("id")),
        "name": str(function.get("name")),
        "input": arguments if isinstance(arguments, dict) else {},
    }


def _blocks(content: Any) -> list[Any]:
    """Content as blocks: a string is one text block (none when empty: the API refuses those)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [part for part in content or () if not _empty_text(part)]


def _empty_text(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "text" and not part.get("text")


def _push(out: list[Message], role: str, blocks: Iterable[Any]) -> None:
    blocks = list(blocks)
    if not blocks:
        return
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    else:
        out.append({"role": role, "content": blocks})


def responses_input(history: Sequence[Message], reveals: Reveals) -> list[Message]:
    """Responses ``input`` items from an OpenAI-style history (leading system messages removed).

    Tool calls become ``function_call`` items, tool messages ``function_call_output``; an item
    that already has a ``type`` (a ``tool_search_call`` the model made, ...) passes unchanged.
    """
    out: list[Message] = []
    turn = 0
    for message in history:
        if message.get("role") == "user":
            turn += 1
            out += reveal_exchange("responses", turn, reveals.get(turn, ()))
        out += _responses(message)
    return out


def _responses(message: Message) -> list[Message]:
    role = message.get("role")
    if "type" in message:
        return [message]
    if role == "tool":
        call_id, output = str(message.get("tool_call_id")), _text(message.get("content"))
        return [{"type": "function_call_output", "call_id": call_id, "output": output}]
    text = _text(message.get("content"))
    said = [{"role": role, "content": text}] if text else []
    return said + [_function_call(call) for call in message.get("tool_calls") or ()]


def _function_call(call: Mapping[str, Any]) -> Message:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    return {
        "type": "function_call",
        "call_id": str(call.get("id")),
        "name": str(function.get("name")),
        "arguments": arguments if isinstance(arguments, str) else "{}",
    }


def _text(content: Any) -> str:
    if isinstance(content, str) or content is None:
        return content or ""
    parts = [p.get("text") for p in content if isinstance(p, dict)]
    return "\n".join(t for t in parts if isinstance(t, str) and t)


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


def unsearched(history: Sequence[Message], listed: Mapping[str, ToolSpec]) -> list[Message]:
    """``history`` with the provider's own load answers rewritten for the ``call_tool`` bridge,
    once the provider refused deferral: a search call becomes a ``load_tools`` call and its
    answer the loaded tools' note, so the resent request holds nothing the provider refuses."""
    return [_unsearched(message, listed) for message in history]


def _unsearched(message: Message, listed: Mapping[str, ToolSpec]) -> Message:
    kind, content = message.get("type"), message.get("content")
    if kind == "tool_search_call":
        return _as_load_call(message)
    if kind == "tool_search_output":
        names = _output_names(message.get("tools") or [])
        call_id = str(message.get("call_id"))
        return {"role": "tool", "tool_call_id": call_id, "content": _listing(names, listed)}
    if message.get("role") == "tool" and isinstance(content, list) and any(map(_is_ref, content)):
        names = [str(part.get("tool_name")) for part in content if _is_ref(part)]
        return {**message, "content": _listing(names, listed)}
    return message


def _as_load_call(search: Message) -> Message:
    """A model's ``tool_search_call`` as the ``load_tools`` call it was (the bridge's form)."""
    arguments = canonical_json(search.get("arguments") or {})
    function = {"name": LOAD_TOOLS, "arguments": arguments}
    call = {"id": str(search.get("call_id")), "type": "function", "function": function}
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def _is_ref(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "tool_reference"


def _output_names(tools: Iterable[Any]) -> list[str]:
    """The function names a ``tool_search_output`` loaded, namespaces opened."""
    flat = [t for tool in tools for t in (tool.get("tools") or [tool])]
    return [str(t.get("name")) for t in flat if isinstance(t, dict)]


def _listing(names: Sequence[str], listed: Mapping[str, ToolSpec]) -> str:
    """The bridge's note for ``names`` (the tools it knows), else their bare names."""
    return note([listed[n] for n in names if n in listed], True) or "Loaded: " + ", ".join(names)


def refuses_deferral(exc: BaseException) -> bool:
    """Whether ``exc`` is a provider's 400 about deferral (``defer_loading``, tool search, a
    beta): the model or endpoint does not support it, so the session must use the bridge."""
    return _refuses(exc, REFUSAL_WORDS)


def _refuses(exc: BaseException, words: Sequence[str]) -> bool:
    status = getattr(exc, "status_code", None)
    return status == 400 and any(word in str(exc).lower() for word in words)


def send_revealing(
    trinket: ToolLoaderTrinket,
    session_id: str,
    history: Sequence[Message],
    send: Callable[[dict[str, Any]], T],
) -> T:
    """Prepare the turn, build its request and ``send`` it; a provider that refuses deferral
    degrades the session to the ``call_tool`` bridge and the turn is sent again, never failed."""
    view = trinket.prepare(session_id, history)
    for _ in range(2):  # tool_addition -> the load_tools exchange -> the call_tool bridge
        try:
            return send(view.request(history))
        except Exception as exc:
            if not degrade(trinket, session_id, view, exc):
                raise
        view = trinket.prepare(session_id, history)
    return send(view.request(history))


def degrade(trinket: ToolLoaderTrinket, session_id: str, view: Any, exc: BaseException) -> bool:
    """Step the session down one reveal mode when ``exc`` is the provider refusing the one its
    request used (``tool_addition``, else deferral); ``False`` for any other failure."""
    if view.addition and _refuses(exc, ADDITION_WORDS):
        trinket.degrade_reveal(session_id, str(exc), to="exchange")
        return True
    if view.deferring and refuses_deferral(exc):
        trinket.degrade_reveal(session_id, str(exc))
        return True
    return False
