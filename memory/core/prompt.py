"""What the model sees: a byte-stable prefix, the ``tools=`` list, and their hash and token cost.

The system message is laid out from the most stable part to the least, because KV caches reuse
the longest common prefix: the ``instructions`` setting and the bundle menu (they change only with
the catalog), then the caller's own system content (fixed per app, though some apps vary it per
turn), then on the text path the tool block last (it changes whenever a tool is loaded). A tool
load re-prefills only the block; a caller who varies their system text re-prefills only that text
and the block. ``tools=`` keeps the loaded set's order, so growth only appends.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tooltray.memory.core.menu import bundle_menu as bundle_menu  # re-exported for callers
from tooltray.memory.core.requests import (
    ADDITION_BETA,
    anthropic_messages,
    responses_input,
    unsearched,
)
from tooltray.memory.core.reveal import weave
from tooltray.memory.metatools.meta_tools import LOAD_TOOLS
from tooltray.tools.deferred import DEFERRED_PATHS, render_revealing
from tooltray.tools.render import NATIVE_PATHS as NATIVE_PATHS  # re-exported for the trinket
from tooltray.tools.render import canonical_json, count_tokens, render_native, render_text
from tooltray.tools.spec import Bundle, ToolSpec

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

    def tools(self, path: str | None = None) -> list[dict[str, Any]]:
        """The ``tools=`` list for ``path`` (default: the view's own native path)."""
        chosen = path or self.path
        if chosen == "text":
            return []
        if self.deferring and chosen == self.path:
            return render_revealing(chosen, self.specs, self.deferred, self.bundles, LOAD_TOOLS)
        return render_native(chosen, self.specs)

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
        loads rewritten for the bridge (:func:`.requests.unsearched`)."""
        theirs, rest = _split(weave(history, dict(self.notes)))
        if not self.deferring:
            rest = unsearched(rest, {s.name: s for s in self.revealed})
        system, reveals = self.system_text(theirs), dict(self.reveals)
        if self.path == "anthropic":
            messages = anthropic_messages(rest, reveals, self.addition)
            return {"system": system, "messages": messages}
        return {"instructions": system, "input": responses_input(rest, reveals)}

    def messages(self, history: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Chat messages: one system message, then the conversation as given.

        The caller's leading system messages are kept, inside the one system message (many chat
        templates accept only one, first): after the stable prefix, before the text-path tool
        block. System messages later in the history stay where the caller put them, since
        moving them to the front would change the start of the prompt and re-prefill it all.
        Revealed tools' notes go before their turn's user message (:func:`.reveal.weave`).
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
    tools_json = canonical_json(render_native(path, specs)) if native else ""
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
    )
