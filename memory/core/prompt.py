"""What the model reads: the prompt view (a byte-stable prefix and ``tools=``), the tools revealed
after a boundary, and each provider's request laid out from one OpenAI-style history.

A prompt cache re-uses only the longest common prefix of two requests and every provider puts
tools first, so the prefix holds what the last boundary chose and changes only at the next one;
a tool revealed later goes at the end: a note woven before its turn's user message (called through
the ``call_tool`` bridge natively), or, where the provider defers tools (Anthropic
``defer_loading``, OpenAI Responses namespaces), the provider's own search answer as a synthetic
exchange before that turn. The system message runs from the most stable part to the least
(instructions and bundle menu, the caller's system text, the text path's tool block), so a load
re-prefills only what follows it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tooltray.memory.core.menu import bundle_menu as bundle_menu  # re-exported for callers
from tooltray.memory.metatools.meta_tools import CALL_TOOL, LOAD_TOOLS, META_TOOL_NAMES
from tooltray.tools.codecall import CodeCallers, code_callable
from tooltray.tools.deferred import (
    DEFERRED_PATHS,
    complete_namespaces,
    render_revealing,
    search_answer,
    search_call,
)
from tooltray.tools.render import NATIVE_PATHS as NATIVE_PATHS  # re-exported for the trinket
from tooltray.tools.render import (
    canonical_json,
    count_tokens,
    render_line,
    render_native,
    render_text,
)
from tooltray.tools.spec import Bundle, ToolSpec, decode_arguments

REVEAL_HEAD = "Tools now available:"
BRIDGE_HINT = 'Call them through call_tool: {"name": "<tool>", "arguments": {...}}.'
TEXT_HINT = "Call them like the listed tools."


DIRECT = frozenset([*META_TOOL_NAMES, CALL_TOOL])  # the model calls these itself, never code


def defers(path: str, reveal: str, meta: Mapping[str, object]) -> bool:
    """Whether a session reveals the provider's way: ``reveal = "append"`` on a path that defers
    tools, unless the provider refused deferral for this session (meta ``bridged``)."""
    return reveal == "append" and path in DEFERRED_PATHS and not meta.get("bridged")


def adds(path: str, reveal: str, addition: bool, meta: Mapping[str, object]) -> bool:
    """Whether a session reveals with Anthropic ``tool_addition`` blocks: it defers tools
    (:func:`defers`), the ``tool_addition`` setting is on, on the anthropic path, and the model
    has not refused them (meta ``addition_refused``)."""
    refused = meta.get("addition_refused")
    return addition and path == "anthropic" and not refused and defers(path, reveal, meta)


def note(specs: Sequence[ToolSpec], native: bool) -> str:
    """The text that reveals ``specs``: one line each, and how to call them on this path."""
    if not specs:
        return ""
    hint = BRIDGE_HINT if native else TEXT_HINT
    lines = "\n".join(map(render_line, specs))  # render_text's lines
    return f"{REVEAL_HEAD}\n{lines}\n{hint}"


def weave(history: Sequence[dict[str, Any]], notes: Mapping[int, str]) -> list[dict[str, Any]]:
    """``history`` with each note put before the text of the user message of its turn.

    Turn ``k`` is the ``k``-th user message. The note joins that message rather than standing
    alone, so the roles still alternate (many chat templates require it) and nothing before the
    message changes: the cached prefix ends where the new turn begins.
    """
    if not notes:
        return list(history)
    out: list[dict[str, Any]] = []
    turn = 0
    for message in history:
        if message.get("role") == "user":
            turn += 1
            if notes.get(turn):
                text, content = notes[turn], message.get("content")
                if isinstance(content, list):
                    content = [{"type": "text", "text": text}, *content]
                else:
                    content = f"{text}\n\n{content}" if content else text
                message = {**message, "content": content}
        out.append(message)
    return out


Reveals = Mapping[int, Sequence[ToolSpec]]
Message = dict[str, Any]
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


def refuses_addition(exc: BaseException) -> bool:
    """Whether ``exc`` is a provider's 400 about ``tool_addition`` (a mid-conversation tool
    change): the session must fall back to the synthetic ``load_tools`` exchange."""
    return _refuses(exc, ADDITION_WORDS)


def _refuses(exc: BaseException, words: Sequence[str]) -> bool:
    status = getattr(exc, "status_code", None)
    return status == 400 and any(word in str(exc).lower() for word in words)


TEXT_CALL_HINT = (
    "To call a tool, reply with only a JSON object: "
    '{"tool": "<name>", "arguments": {...}}. Tools not listed here can be called by name too.'
)
TEXT_LOAD_HINT = (
    "To see the tools of a bundle in the menu above, call "
    '{"tool": "load_tools", "arguments": {"tools": ["<bundle>"]}}.'
)


def text_block(specs: Sequence[ToolSpec], *, menu: bool = False) -> str:
    """The text-path tool block: one line per tool, then the call format (and, under a bundle
    menu, how to load a bundle with a text call)."""
    if not specs and not menu:
        return ""
    hint = TEXT_CALL_HINT + (" " + TEXT_LOAD_HINT if menu else "")
    if not specs:
        return hint
    return "Tools:\n" + render_text(list(specs)) + "\n" + hint


@dataclass(frozen=True)
class PromptView:
    """Everything the caller needs to build one model request, for any provider.

    Attributes:
        system_prefix: instructions (+ bundle menu) (+ text tool block); :meth:`messages` puts it
            first, with the caller's own system content before the text tool block.
        specs: the tools callable natively, in order (meta-tools first); empty on the text path.
        text_specs: the tools listed in the text block (text path only).
        prefix_hash: sha256 of the prefix and the ``tools=`` bytes: a change means a cache miss
            (the caller's system content is theirs to keep stable and is not hashed).
        tool_tokens: o200k tokens of the tool part (native schemas, or the text block).
        eager_tokens: the same measure had every allowed tool been exposed.
        mode: ``selected``, ``all``, ``disabled`` or ``degraded``.
        tool_block: the text-path tool block that ends ``system_prefix`` (empty when native).
        revealed: tools loaded since the last boundary, outside the prefix (``reveal =
            "append"``): callable, listed at the end of the context, never in ``tools=``.
        notes: ``(user turn, text)``: what :meth:`messages` puts before that turn's user message
            (tooltray's own reveals; a model's ``load_tools`` answer lists its own).
        deferring: the provider defers tools (Anthropic, Responses, ``reveal = "append"``):
            ``tools=`` also declares ``deferred``, reveals are the provider's search answers and
            there is neither ``call_tool`` bridge nor note.
        deferred: every other allowed tool, in catalog order, declared deferred in ``tools=``.
        bundles: the bundles the Responses namespaces of ``deferred`` are named after.
        reveals: ``(user turn, tools)``: tooltray's own reveals, which :meth:`request` lays
            out as a synthetic search exchange before that turn's user message (``deferring``).
        addition: Anthropic reveals are ``tool_addition`` blocks in a system message instead
            of that exchange (the ``tool_addition`` setting); :meth:`request` adds the beta.
        code_callers: who may call the tools on Anthropic and Responses (the setting):
            ``both``/``code`` add ``allowed_callers`` and the provider's code tool.
    """

    session_id: str
    turn: int
    path: str
    mode: str
    system_prefix: str
    specs: tuple[ToolSpec, ...]
    text_specs: tuple[ToolSpec, ...]
    prefix_hash: str
    tool_tokens: int
    eager_tokens: int
    loaded: tuple[str, ...] = field(default=())
    tool_block: str = ""
    revealed: tuple[ToolSpec, ...] = field(default=())
    notes: tuple[tuple[int, str], ...] = field(default=())
    deferring: bool = False
    deferred: tuple[ToolSpec, ...] = field(default=())
    bundles: tuple[Bundle, ...] = field(default=())
    reveals: tuple[tuple[int, tuple[ToolSpec, ...]], ...] = field(default=())
    addition: bool = False
    code_callers: CodeCallers = "off"

    def tools(self, path: str | None = None) -> list[dict[str, Any]]:
        """The ``tools=`` list for ``path`` (default: the view's own native path), its tools
        marked callable from code as the ``code_callers`` setting says."""
        chosen = path or self.path
        if chosen == "text":
            return []
        if self.deferring and chosen == self.path:
            tools = render_revealing(chosen, self.specs, self.deferred, self.bundles, LOAD_TOOLS)
        else:
            tools = render_native(chosen, self.specs)
        return code_callable(chosen, tools, self.code_callers, DIRECT)

    def request(self, history: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The request body's tool and conversation fields for the view's path, ready for
        ``chat.completions.create``, ``responses.create`` or ``messages.create`` (add the model).

        Anthropic gets ``system`` + ``messages``, Responses ``instructions`` + ``input``, Chat
        Completions and the text path ``messages``; ``tools`` when there are any; ``betas``
        when Anthropic reveals with ``tool_addition`` (send it with ``client.beta.messages``).
        """
        if self.path in DEFERRED_PATHS:
            body = self._conversation(history)
        else:
            body = {"messages": self.messages(history)}
        betas = [ADDITION_BETA] if self.addition else []
        return {k: v for k, v in {**body, "tools": self.tools(), "betas": betas}.items() if v}

    def _conversation(self, history: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Anthropic's or Responses' system text and conversation: reveals as the provider's own
        search exchange while it defers tools, else as notes, with the model's earlier native
        loads rewritten for the bridge (:func:`unsearched`)."""
        theirs, rest = _split(weave(history, dict(self.notes)))
        if not self.deferring:
            rest = unsearched(rest, {s.name: s for s in self.revealed})
        system, reveals = self.system_text(theirs), dict(self.reveals)
        if self.path == "anthropic":
            messages = anthropic_messages(rest, reveals, self.addition)
            return {"system": system, "messages": messages}
        items = complete_namespaces(responses_input(rest, reveals), self.tools())
        return {"instructions": system, "input": items}

    def messages(self, history: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Chat messages: one system message, then the conversation as given.

        The caller's leading system messages are kept, inside the one system message (many chat
        templates accept only one, first): after the stable prefix, before the text-path tool
        block. System messages later in the history stay where the caller put them, since
        moving them to the front would change the start of the prompt and re-prefill it all.
        Revealed tools' notes go before their turn's user message (:func:`weave`).
        """
        theirs, rest = _split(weave(history, dict(self.notes)))
        system = self.system_text(theirs) if theirs else self.system_prefix
        return [{"role": "system", "content": system}, *rest]

    def system_text(self, theirs: Sequence[str] = ()) -> str:
        """The system message: the stable prefix with the caller's ``theirs`` before the block."""
        own = "\n\n".join(t.strip() for t in theirs if t.strip())
        if not own:
            return self.system_prefix
        head = self.system_prefix[: len(self.system_prefix) - len(self.tool_block)].strip()
        return "\n\n".join(p for p in (head, own, self.tool_block) if p)


def _split(history: Sequence[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """The caller's leading system messages' texts, and the conversation after them."""
    lead = 0
    while lead < len(history) and history[lead].get("role") == "system":
        lead += 1
    if not lead:
        return [], list(history)
    return [_content_text(m.get("content")) for m in history[:lead]], list(history[lead:])


def prefix_digest(prefix: str, tools_json: str) -> str:
    """sha256 of the system prefix and the ``tools=`` bytes: a change means a cache miss."""
    return hashlib.sha256((prefix + "\x00" + tools_json).encode("utf-8")).hexdigest()


def _content_text(content: Any) -> str:
    """A message's text: a string, or the text parts of an OpenAI content-part list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return "\n".join(t for t in parts if isinstance(t, str) and t)
    return str(content)


def compose(
    *,
    session_id: str,
    turn: int,
    path: str,
    mode: str,
    instructions: str,
    specs: Sequence[ToolSpec],
    menu: str,
    eager_tokens: int,
    code_callers: CodeCallers = "off",
) -> PromptView:
    """Build the view for the given ordered tools; the same inputs give the same bytes."""
    native = path in NATIVE_PATHS
    parts = [instructions.strip()] if instructions.strip() else []
    block = "" if native else text_block(specs, menu=bool(menu))
    if menu:
        parts.append(menu)
    if block:
        parts.append(block)
    prefix = "\n\n".join(parts)
    rendered = code_callable(path, render_native(path, specs), code_callers, DIRECT)
    tools_json = canonical_json(rendered) if native else ""
    digest = prefix_digest(prefix, tools_json)
    tokens = count_tokens(tools_json if native else block).n
    return PromptView(
        session_id=session_id,
        turn=turn,
        path=path,
        mode=mode,
        system_prefix=prefix,
        specs=tuple(specs) if native else (),
        text_specs=() if native else tuple(specs),
        prefix_hash=digest,
        tool_tokens=tokens,
        eager_tokens=eager_tokens,
        loaded=tuple(s.name for s in specs),
        tool_block=block,
        code_callers=code_callers,
    )
