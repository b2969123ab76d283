"""Provider-native deferral: tooltray's selection rendered for APIs that defer tool schemas.

Anthropic's Messages API accepts ``defer_loading: true`` on a tool (its schema stays out of the
model's context) plus a search tool whose ``tool_result`` holds ``tool_reference`` blocks; the
API then expands the referenced tools in place. OpenAI's Responses API has a ``tool_search``
tool (``execution: "client"`` for a search the caller runs) and ``namespace`` groups; the caller
answers a ``tool_search_call`` with a ``tool_search_output`` item carrying the definitions.

Here the selection at session start is rendered in full, every other allowed tool deferred, and
tooltray's retriever is the client-side search. The list does not change when tools are found,
so a load never changes the request prefix. This is an extra render option: the paths of
:mod:`tooltray.tools.render` (and their golden bytes) are untouched. The trinket's own reveal
by appending renders through :func:`render_revealing` (its ``load_tools`` is the search) and
answers with :func:`search_answer`, so each provider's deferral format has this one owner.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tooltray.tools.errors import ConfigError
from tooltray.tools.names import sanitize_name
from tooltray.tools.render import anthropic_tool, openai_responses_tool
from tooltray.tools.spec import Bundle, ToolSpec

DEFERRED_PATHS = ("anthropic", "responses")
SEARCH_TOOL = ToolSpec(
    name="tool_search",
    description=(
        "Find more tools by describing the task in a few words; the tools found become "
        "callable right away."
    ),
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "what the tools should do"}},
        "required": ["query"],
    },
    source="tooltray",
)
NOTHING_FOUND = "No matching tools; describe the task again."


def check_deferred_path(path: str) -> str:
    """Return ``path`` if a provider can defer tools on it, else raise ``ConfigError``."""
    if path not in DEFERRED_PATHS:
        raise ConfigError(f"No native deferral on {path!r}: use one of {DEFERRED_PATHS}.")
    return path


def render_deferred(
    path: str,
    loaded: Sequence[ToolSpec],
    deferred: Sequence[ToolSpec],
    bundles: Sequence[Bundle] = (),
) -> list[dict[str, Any]]:
    """``tools=`` with ``loaded`` in full, the search tool, then ``deferred`` marked deferred.

    Args:
        path: ``anthropic`` or ``responses``.
        loaded: the tools the model sees from the start (tooltray's selection), in order.
        deferred: every other allowed tool, in a stable order (catalog order).
        bundles: on ``responses``, deferred tools are grouped in one namespace per bundle
            (tools without a bundle stay top-level); ignored on ``anthropic``.
    """
    if check_deferred_path(path) == "anthropic":
        head = [anthropic_tool(s) for s in loaded] + [anthropic_tool(SEARCH_TOOL)]
    else:
        head = [openai_responses_tool(s) for s in loaded] + [responses_search_tool()]
    return head + deferred_entries(path, deferred, bundles)


def render_revealing(
    path: str,
    shown: Sequence[ToolSpec],
    deferred: Sequence[ToolSpec],
    bundles: Sequence[Bundle] = (),
    search: str = "",
) -> list[dict[str, Any]]:
    """``tools=`` when tooltray reveals by appending on a deferring provider: ``shown`` in full
    (the tool named ``search``, tooltray's ``load_tools``, becomes the Responses client-executed
    ``tool_search``, since only its answer can load a deferred tool there), then ``deferred``.
    """
    if check_deferred_path(path) == "anthropic":
        head = [anthropic_tool(s) for s in shown]
    else:
        head = [
            responses_search_tool(s) if s.name == search else openai_responses_tool(s)
            for s in shown
        ]
    return head + deferred_entries(path, deferred, bundles)


def deferred_entries(
    path: str, deferred: Sequence[ToolSpec], bundles: Sequence[Bundle] = ()
) -> list[dict[str, Any]]:
    """The deferred part of ``tools=``: ``defer_loading`` tools (Anthropic) or namespaces."""
    if check_deferred_path(path) == "anthropic":
        return [{**anthropic_tool(s), "defer_loading": True} for s in deferred]
    return namespaces(deferred, bundles)


def responses_search_tool(spec: ToolSpec = SEARCH_TOOL) -> dict[str, Any]:
    """The Responses API's client-executed ``tool_search`` tool, described as ``spec``."""
    return {
        "type": "tool_search",
        "execution": "client",
        "description": spec.description,
        "parameters": spec.parameters,
    }


def namespaces(deferred: Sequence[ToolSpec], bundles: Sequence[Bundle]) -> list[dict[str, Any]]:
    """Deferred Responses function tools, one ``namespace`` per bundle, in first-seen order."""
    about = {b.name: b.description for b in bundles}
    groups: dict[str | None, list[dict[str, Any]]] = {}
    for spec in deferred:
        groups.setdefault(spec.bundle, []).append(
            {**openai_responses_tool(spec), "defer_loading": True}
        )
    out: list[dict[str, Any]] = []
    for bundle, tools in groups.items():
        if bundle is None:
            out += tools
            continue
        description = about.get(bundle) or f"{bundle} tools"
        name = sanitize_name(bundle)  # a namespace needs the name pattern; the menu does not
        out.append({"type": "namespace", "name": name, "description": description, "tools": tools})
    return out


def tool_namespaces(tools: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """``{tool name: namespace}`` for every function inside a ``namespace`` of a Responses
    ``tools=`` list (a top-level function is in no namespace)."""
    return {
        str(inner.get("name")): str(entry.get("name"))
        for entry in tools
        if entry.get("type") == "namespace"
        for inner in entry.get("tools") or ()
    }


def complete_namespaces(items: Sequence[Any], tools: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Responses ``input`` items with each ``function_call`` of a namespaced tool given its
    ``namespace`` where it lacks one.

    The API refuses a replayed call to a deferred tool without it ("Missing namespace for
    function_call"), and clients that rebuild items from chat-style history drop it. A call
    that names a namespace, a tool in none, and every other item pass unchanged (completed
    items are copies; items that are not mappings are left as they are).
    """
    owners = tool_namespaces(tools)
    return [_with_namespace(item, owners) for item in items]


def _with_namespace(item: Any, owners: Mapping[str, str]) -> Any:
    if not isinstance(item, Mapping) or item.get("type") != "function_call":
        return item
    if item.get("namespace") or str(item.get("name")) not in owners:
        return item
    return {**item, "namespace": owners[str(item.get("name"))]}


def search_answer(
    path: str, call_id: str, found: Sequence[ToolSpec], text: str = ""
) -> dict[str, Any]:
    """The client-side search's answer: ``tool_reference`` blocks or a ``tool_search_output``.

    ``text`` answers an Anthropic search that found nothing (the default asks for another try).
    """
    if check_deferred_path(path) == "anthropic":
        refs = tool_references([s.name for s in found])
        content = refs or [{"type": "text", "text": text or NOTHING_FOUND}]
        return {"type": "tool_result", "tool_use_id": call_id, "content": content}
    return {
        "type": "tool_search_output",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "tools": [openai_responses_tool(s) for s in found],
    }


def tool_references(names: Sequence[str]) -> list[dict[str, Any]]:
    """Anthropic ``tool_reference`` blocks: in a ``tool_result`` they expand deferred tools."""
    return [{"type": "tool_reference", "tool_name": name} for name in names]


def search_call(call_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A completed client ``tool_search_call`` item (Responses), as the model would send it."""
    return {
        "type": "tool_search_call",
        "call_id": call_id,
        "execution": "client",
        "status": "completed",
        "arguments": arguments,
    }
