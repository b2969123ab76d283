"""What the model reads: the prompt view (byte-stable prefix, tools=), the tools revealed after a
boundary, and each provider's request.

Reveal by appending: tools loaded after a session boundary go at the end of the context.

A prompt cache re-uses only the longest common prefix of two requests, and every provider puts
tools first, so a tool written into ``tools=`` mid-session re-prefills the system text and the
whole conversation after it. With ``reveal = "append"`` the prefix holds what the last boundary
chose and stays byte-stable until the next one (start, resume, compaction, where used revealed
tools fold into it and idle ones leave). A tool tooltray reveals itself at a later turn's start
is listed in a note woven before that turn's user message, in every later request alike; a tool
the model loads is listed in the ``load_tools`` answer, which the conversation keeps. Natively
the model calls a revealed tool through the ``call_tool`` bridge (it is not in ``tools=``); on
the text path it calls it like any listed tool.

Providers that defer tools natively (Anthropic ``defer_loading``, OpenAI Responses namespaces)
need neither note nor bridge: every allowed tool outside the prefix is declared deferred in
``tools=`` and a reveal is the provider's own search answer (the requests below), until the
provider refuses deferral for a session (it is then ``bridged``, see :func:`defers`).

Each provider's request from one view, with tooltray's own reveals appended the provider's way.

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

What the model sees: a byte-stable prefix, the ``tools=`` list, and their hash and token cost.

The system message is laid out from the most stable part to the least, because KV caches reuse
the longest common prefix: the ``instructions`` setting and the bundle menu (they change only with
the catalog), then the caller's own system content (fixed per app, though some apps vary it per
turn), then on the text path the tool block last (it changes whenever a tool is loaded). A tool
load re-prefills only the block; a caller who varies their system text re-prefills only that text
and the block. ``tools=`` keeps the loaded set's order, so growth only appends.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

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
from tooltray.tools.render import canonical_json, count_tokens, render_native, render_text
from tooltray.tools.spec import Bundle, ToolSpec, decode_arguments

if TYPE_CHECKING:
    from tooltray.memory.core.trinket import ToolLoaderTrinket


REVEAL_HEAD = "Tools now available:"
BRIDGE_HINT = 'Call them through call_tool: {"name": "<tool>", "arguments": {...}}.'
TEXT_HINT = "Call them like the listed tools."


DIRECT = frozenset([*META_TOOL_NAMES, CALL_TOOL])  # the model calls these itself, never code


def split_loaded(
    loaded: Sequence[str], prefix: Sequence[str] | None
) -> tuple[list[str], list[str]]:
    """``(prefix tools, revealed tools)``: without a stored prefix every loaded tool is in it.

    A prefix tool unloaded mid-session stays in the prefix until the next boundary (the prefix
    never changes between boundaries); the loaded tools outside the prefix are revealed.
    """
    if prefix is None:
        return list(loaded), []
    inside = set(prefix)
    return list(prefix), [n for n in loaded if n not in inside]


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
    return f"{REVEAL_HEAD}\n{render_text(list(specs))}\n{hint}"


def stored_reveals(raw: object) -> list[tuple[int, list[str]]]:
    """The session meta's ``reveals`` as ``(user turn, names)``; malformed rows are skipped."""
    out: list[tuple[int, list[str]]] = []
    for row in raw if isinstance(raw, list) else []:
        if isinstance(row, (list, tuple)) and len(row) == 2 and isinstance(row[0], int):
            names = [n for n in row[1] if isinstance(n, str)] if isinstance(row[1], list) else []
            out.append((row[0], names))
    return out


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
                message = {**message, "content": _prepend(notes[turn], message.get("content"))}
        out.append(message)
    return out


def _prepend(text: str, content: Any) -> Any:
    if isinstance(content, list):
        return [{"type": "text", "text": text}, *content]
    return f"{text}\n\n{content}" if content else text


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
    if view.addition and _refuses(exc, ADDITION_WORDS):
        trinket.degrade_reveal(session_id, str(exc), to="exchange")
        return True
    if view.deferring and refuses_deferral(exc):
        trinket.degrade_reveal(session_id, str(exc))
        return True
    return False


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
        return [{"role": "system", "content": self.system_text(theirs)}, *rest]

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
