"""What the model sees: a byte-stable prefix, the ``tools=`` list, and their hash and token cost.

The prefix is the caller's instructions, then (native path) the bundle menu, then (text path) the
tool block last, because KV caches reuse the longest common prefix. ``tools=`` keeps the loaded
set's order, so growth only appends.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tooltray.tools.render import NATIVE_PATHS as NATIVE_PATHS  # re-exported for the trinket
from tooltray.tools.render import canonical_json, render_native, render_text
from tooltray.tools.spec import Bundle, ToolSpec
from tooltray.tools.tokens import count_tokens

TEXT_CALL_HINT = (
    "To call a tool, reply with only a JSON object: "
    '{"tool": "<name>", "arguments": {...}}. Tools not listed here can be called by name too.'
)


def bundle_menu(bundles: Sequence[Bundle]) -> str:
    """One line per bundle: the escape-hatch menu that lets a native model ask for tools."""
    if not bundles:
        return ""
    lines = ["Tool bundles you can load with load_tools (bundle: what it is for):"]
    for b in sorted(bundles, key=lambda b: b.name):
        desc = " ".join(b.description.split()) or "tools of this group"
        lines.append(f"- {b.name} ({len(b.members)} tools): {desc}")
    return "\n".join(lines)


def text_block(specs: Sequence[ToolSpec]) -> str:
    """The text-path tool block: the call format, then one line per tool."""
    if not specs:
        return ""
    return "Tools:\n" + render_text(list(specs)) + "\n" + TEXT_CALL_HINT


@dataclass(frozen=True)
class PromptView:
    """Everything the caller needs to build one model request, for any provider.

    Attributes:
        system_prefix: instructions (+ bundle menu) (+ text tool block): put it first, unchanged.
        specs: the tools callable natively, in order (meta-tools first); empty on the text path.
        text_specs: the tools listed in the text block (text path only).
        prefix_hash: sha256 of the prefix and the ``tools=`` bytes: a change means a cache miss.
        tool_tokens: o200k tokens of the tool part (native schemas, or the text block).
        eager_tokens: the same measure had every allowed tool been exposed.
        mode: ``selected``, ``all``, ``disabled`` or ``degraded``.
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

    def tools(self, path: str | None = None) -> list[dict[str, Any]]:
        """The ``tools=`` list for ``path`` (default: the view's own native path)."""
        chosen = path or self.path
        if chosen == "text":
            return []
        return render_native(chosen, self.specs)

    def messages(self, history: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Chat messages: the stable system prefix first, then the conversation as given."""
        rest = [m for m in history if m.get("role") != "system"]
        return [{"role": "system", "content": self.system_prefix}, *rest]


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
    if native and menu:
        parts.append(menu)
    block = "" if native else text_block(specs)
    if block:
        parts.append(block)
    prefix = "\n\n".join(parts)
    tools_json = canonical_json(render_native(path, specs)) if native else ""
    digest = hashlib.sha256((prefix + "\x00" + tools_json).encode("utf-8")).hexdigest()
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
    )
