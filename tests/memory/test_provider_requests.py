"""Every provider's request, built by a real trinket and checked against the provider SDK's types.

A two-turn session on the demo catalog (SQLite file, ``context_window`` 8192), whose second turn
reveals tools, is laid out by ``PromptView.request`` for each path and validated with the SDK's
own request TypedDicts (``openai`` chat and responses create params, ``anthropic``
``MessageCreateParamsNonStreaming``) under ``extra="forbid"``, every lazily validated iterable
drained. The installed SDKs know the newest fields (``defer_loading``, ``tool_reference``,
``namespace``, ``tool_search_call`` / ``tool_search_output``), so nothing is left unchecked.
The pins: ``tools=`` and the system text are byte-identical between the turns, and the revealed
tools appear only after the first turn's history (never in the part a cache holds).
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from anthropic.types.beta.message_create_params import (
    MessageCreateParamsNonStreaming as BetaMessageCreateParams,
)
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import ConfigDict, TypeAdapter

from tooltray.events import TurnCompleted, emit, turn_completed
from tooltray.memory import Settings, ToolLoaderTrinket
from tooltray.memory.adapters.requests import load_answer, send_revealing
from tooltray.memory.core.prompt import ADDITION_BETA
from tooltray.memory.metatools.meta_tools import CALL_TOOL
from tooltray.tools.deferred import search_call
from tooltray.tools.demo import demo_registry
from tooltray.tools.render import canonical_json

PATHS = ("openai", "responses", "anthropic", "text")
FIRST = "What's the weather in Paris tomorrow?"
LATER = "Book me a flight from Paris to Rome on Friday, and a hotel there."
FORBID = ConfigDict(extra="forbid")
CHAT: TypeAdapter[Any] = TypeAdapter(list[CompletionCreateParamsNonStreaming], config=FORBID)
SDK_TYPES: dict[str, TypeAdapter[Any]] = {
    "openai": CHAT,
    "text": CHAT,
    "responses": TypeAdapter(list[ResponseCreateParamsNonStreaming], config=FORBID),
    "anthropic": TypeAdapter(list[MessageCreateParamsNonStreaming], config=FORBID),
}
CONVERSATION = {"anthropic": "messages", "responses": "input", "openai": "messages"}
CONVERSATION["text"] = "messages"
HISTORY = [
    {"role": "user", "content": FIRST},
    {"role": "assistant", "content": "Sunny."},
    {"role": "user", "content": LATER},
]


def trinket_on(tmp_path: Path, path: str) -> ToolLoaderTrinket:
    settings = Settings(db=f"sqlite:///{tmp_path / 'tooltray.db'}", context_window=8192, path=path)
    return ToolLoaderTrinket(demo_registry(), settings=settings)


def two_turns(trinket: ToolLoaderTrinket) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """Turn 1's and turn 2's requests (turn 2 reveals tools), and turn 2's view."""
    history: list[dict[str, Any]] = [{"role": "user", "content": FIRST}]
    first = trinket.prepare("s", history).request(history)
    emit(turn_completed, "s", TurnCompleted(message_count=len(history)))
    history += [{"role": "assistant", "content": "Sunny."}, {"role": "user", "content": LATER}]
    view = trinket.prepare("s", history)
    return first, view.request(history), view


@pytest.fixture(params=PATHS)
def session(request: Any, tmp_path: Path) -> Iterator[tuple[str, Any, Any, Any]]:
    with trinket_on(tmp_path, request.param) as trinket:
        yield (request.param, *two_turns(trinket))


def drained(value: Any) -> Any:
    """``value`` with every lazily validated iterable consumed, so each item is validated."""
    if isinstance(value, dict):
        return {k: drained(v) for k, v in value.items()}
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        return value
    return [drained(v) for v in value]


def validate(path: str, body: dict[str, Any]) -> None:
    """Check ``body`` against the provider SDK's request type, unknown keys refused."""
    full = {"model": "a-model", **body} | ({"max_tokens": 1024} if path == "anthropic" else {})
    drained(SDK_TYPES[path].validate_python([full]))


def names_in(tools: list[dict[str, Any]], *, deferred: bool) -> set[str]:
    """Names in ``tools=`` (inside namespaces too) that are, or are not, ``defer_loading``."""
    inner = [t for tool in tools for t in tool.get("tools", [])]
    flat = [t.get("function", t) for t in [*tools, *inner] if t.get("type") != "namespace"]
    return {str(t.get("name")) for t in flat if bool(t.get("defer_loading")) is deferred}


def test_both_turns_validate_against_the_provider_sdk(session: tuple[str, Any, Any, Any]) -> None:
    path, first, second, view = session
    assert view.revealed, "the second turn must reveal tools for this test to mean anything"
    validate(path, first)
    validate(path, second)


def test_the_prefix_is_byte_identical_between_turns(session: tuple[str, Any, Any, Any]) -> None:
    path, first, second, _ = session
    assert canonical_json(first.get("tools")) == canonical_json(second.get("tools"))
    system = {"anthropic": "system", "responses": "instructions"}.get(path)
    if system is None:
        assert first["messages"][0] == second["messages"][0]
    else:
        assert first[system] == second[system]
    conversation = CONVERSATION[path]
    # the first turn's conversation is a prefix of the second's: the cache keeps all of it
    assert second[conversation][: len(first[conversation])] == first[conversation]


def test_revealed_tools_appear_only_after_the_history(session: tuple[str, Any, Any, Any]) -> None:
    path, first, second, view = session
    revealed = {s.name for s in view.revealed}
    tools = second.get("tools", [])
    assert not revealed & names_in(tools, deferred=False)  # never callable from the prefix
    if path in ("anthropic", "responses"):
        assert revealed <= names_in(tools, deferred=True)  # declared deferred from turn 1 on
        assert CALL_TOOL not in names_in(tools, deferred=False)  # no bridge where it defers
        assert "read_result" in names_in(tools, deferred=False)  # so read_result is shown
    else:
        assert CALL_TOOL in names_in(tools, deferred=False) or path == "text"
    tail = second[CONVERSATION[path]][len(first[CONVERSATION[path]]) :]
    head = json.dumps(second[CONVERSATION[path]][: len(first[CONVERSATION[path]])])
    assert all(name not in head for name in revealed)
    assert all(name in json.dumps(tail) for name in revealed)


def test_anthropic_reveal_is_a_load_tools_exchange_of_tool_references(tmp_path: Path) -> None:
    with trinket_on(tmp_path, "anthropic") as trinket:
        _, second, view = two_turns(trinket)
    use, answer = second["messages"][-2]["content"][-1], second["messages"][-1]["content"]
    names = [s.name for s in view.revealed]
    assert use == {
        "type": "tool_use",
        "id": "tooltray_reveal_2",
        "name": "load_tools",
        "input": {"tools": names},
    }
    refs = [{"type": "tool_reference", "tool_name": n} for n in names]
    assert answer[0] == {"type": "tool_result", "tool_use_id": "tooltray_reveal_2", "content": refs}
    assert answer[1] == {"type": "text", "text": LATER}  # the user's text follows in one message


def test_responses_reveal_is_a_tool_search_pair_before_the_user_message(tmp_path: Path) -> None:
    with trinket_on(tmp_path, "responses") as trinket:
        _, second, view = two_turns(trinket)
    call, output, user = second["input"][-3:]
    assert call["type"] == "tool_search_call" and call["execution"] == "client"
    assert output["type"] == "tool_search_output" and output["call_id"] == call["call_id"]
    assert [t["name"] for t in output["tools"]] == [s.name for s in view.revealed]
    assert user == {"role": "user", "content": LATER}
    search = [t for t in second["tools"] if t["type"] == "tool_search"]
    assert search and search[0]["execution"] == "client"  # load_tools is the client search
    assert "load_tools" not in {t.get("name") for t in second["tools"]}


def test_a_restarted_trinket_repeats_the_same_request(tmp_path: Path) -> None:
    with trinket_on(tmp_path, "anthropic") as trinket:
        _, second, _ = two_turns(trinket)
    history = list(HISTORY)
    with trinket_on(tmp_path, "anthropic") as again:
        assert canonical_json(again.prepare("s", history).request(history)) == canonical_json(
            second
        )


def model_loads(trinket: ToolLoaderTrinket, path: str) -> list[dict[str, Any]]:
    """The third turn's history: the model loads a tool natively and gets the trinket's answer."""
    arguments = {"tools": ["shopping_track_order"]}
    answer = load_answer(trinket, "s", "call_1", arguments)
    if path == "responses":
        return [*HISTORY, search_call("call_1", arguments), answer]
    function = {"name": "load_tools", "arguments": json.dumps(arguments)}
    call = {"id": "call_1", "type": "function", "function": function}
    return [*HISTORY, {"role": "assistant", "content": "", "tool_calls": [call]}, answer]


@pytest.mark.parametrize("path", ["anthropic", "responses"])
def test_the_models_load_tools_is_answered_the_providers_way(tmp_path: Path, path: str) -> None:
    with trinket_on(tmp_path, path) as trinket:
        first, _, _ = two_turns(trinket)
        history = model_loads(trinket, path)
        after = trinket.prepare("s", history).request(history)
    validate(path, after)
    if path == "anthropic":
        refs = [{"type": "tool_reference", "tool_name": "shopping_track_order"}]
        result = {"type": "tool_result", "tool_use_id": "call_1", "content": refs}
        assert after["messages"][-1] == {"role": "user", "content": [result]}
    else:
        answer = after["input"][-1]
        assert answer["type"] == "tool_search_output" and answer["call_id"] == "call_1"
        assert [t["name"] for t in answer["tools"]] == ["shopping_track_order"]
    assert canonical_json(after["tools"]) == canonical_json(first["tools"])  # a load keeps it


@pytest.mark.parametrize("path", ["anthropic", "responses"])
def test_a_bridged_session_rewrites_the_models_native_loads(tmp_path: Path, path: str) -> None:
    """Refused after the model loaded natively: the resent request lists the loaded tool in the
    bridge's note and holds no search item or tool reference the provider would refuse."""
    with trinket_on(tmp_path, path) as trinket:
        two_turns(trinket)
        history = model_loads(trinket, path)
        trinket.degrade_reveal("s", "400 tool search is not supported")
        bridged = trinket.prepare("s", history).request(history)
    validate(path, bridged)
    conversation = json.dumps(bridged[CONVERSATION[path]])
    assert "tool_reference" not in conversation and "tool_search" not in conversation
    assert "Tools now available" in conversation and "shopping_track_order(" in conversation


def refusal(path: str) -> Exception:
    """The provider SDK's own 400, as an unsupported model or beta answers deferred tools."""
    request = httpx2.Request("POST", "https://api.example/v1/messages")
    response = httpx2.Response(400, request=request)
    message = "Error code: 400 - defer_loading is not supported for this model"
    if path == "anthropic":
        return anthropic.BadRequestError(message, response=response, body=None)
    return openai.BadRequestError(message, response=response, body=None)


@pytest.mark.parametrize("path", ["anthropic", "responses"])
def test_a_refused_deferral_degrades_to_the_bridge_without_failing_the_turn(
    tmp_path: Path, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    sent: list[dict[str, Any]] = []

    def provider(body: dict[str, Any]) -> str:
        """Refuses deferred tools like a model without tool search; takes anything else."""
        validate(path, body)
        sent.append(body)
        if "defer_loading" in json.dumps(body):
            raise refusal(path)
        return "ok"

    history = list(HISTORY)
    with trinket_on(tmp_path, path) as trinket:
        two_turns(trinket)
        with caplog.at_level(logging.WARNING, logger="tooltray"):
            assert send_revealing(trinket, "s", history, provider) == "ok"
            trinket.degrade_reveal("s", "again")  # already bridged: nothing more
        kinds = [e.kind for e in trinket.store.history("s")]
        view = trinket.prepare("s", history)
    bridged = sent[-1]
    assert len(sent) == 2 and CALL_TOOL in names_in(bridged["tools"], deferred=False)
    assert "Tools now available" in json.dumps(bridged)  # the reveal is a note now
    assert kinds.count("degraded") == 1 and not view.deferring
    assert len([r for r in caplog.records if "deferred tools refused" in r.message]) == 1


with warnings.catch_warnings():  # the SDK's fallback param allows extra keys; forbid the rest
    warnings.simplefilter("ignore")
    BETA_TYPES: TypeAdapter[Any] = TypeAdapter(list[BetaMessageCreateParams], config=FORBID)


def adding_trinket(tmp_path: Path) -> ToolLoaderTrinket:
    url = f"sqlite:///{tmp_path / 'tooltray.db'}"
    settings = Settings(db=url, context_window=8192, path="anthropic", tool_addition=True)
    return ToolLoaderTrinket(demo_registry(), settings=settings)


def test_anthropic_tool_addition_reveals_in_a_system_message_under_the_beta(
    tmp_path: Path,
) -> None:
    """``tool_addition = True``: the turn's reveal is one system message of ``tool_addition``
    blocks naming the deferred tools, just before the user's message; the prefix and the first
    turn stay byte-identical; both requests pass the SDK's beta request type."""
    with adding_trinket(tmp_path) as trinket:
        first, second, view = two_turns(trinket)
    for body in (first, second):
        drained(BETA_TYPES.validate_python([{"model": "m", "max_tokens": 64, **body}]))
    assert second["betas"] == [ADDITION_BETA] and view.addition
    assert canonical_json(first["tools"]) == canonical_json(second["tools"])
    assert second["system"] == first["system"]
    assert second["messages"][: len(first["messages"])] == first["messages"]
    added, user = second["messages"][-2:]
    names = [s.name for s in view.revealed]
    tool = [{"type": "tool_addition", "tool": {"type": "tool_reference", "name": n}} for n in names]
    assert names and added == {"role": "system", "content": tool}
    assert user == {"role": "user", "content": [{"type": "text", "text": LATER}]}
    assert set(names) <= names_in(second["tools"], deferred=True)


def test_a_refused_tool_addition_steps_down_to_the_exchange_then_the_bridge(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A model without the beta refuses ``tool_addition`` (the session reveals by the
    ``load_tools`` exchange), then one without tool search refuses deferral (the bridge): each
    step is one log line and one ``degraded`` event, and the turn is answered."""
    sent: list[str] = []

    def provider(body: dict[str, Any]) -> str:
        text = json.dumps(body)
        sent.append(text)
        for word in ("tool_addition", "defer_loading"):
            if word in text:
                raise anthropic.BadRequestError(
                    f"Error code: 400 - {word} is not supported for this model",
                    response=httpx2.Response(400, request=httpx2.Request("POST", "https://x")),
                    body=None,
                )
        return "ok"

    history = list(HISTORY)
    with adding_trinket(tmp_path) as trinket:
        two_turns(trinket)
        with caplog.at_level(logging.WARNING, logger="tooltray"):
            assert send_revealing(trinket, "s", history, provider) == "ok"
        kinds = [e.kind for e in trinket.store.history("s")]
        meta = trinket.state("s").snapshot.meta
    assert len(sent) == 3 and "tool_addition" in sent[0]
    assert "tool_reference" in sent[1] and "tool_addition" not in sent[1]
    assert "Tools now available" in sent[2] and "defer_loading" not in sent[2]
    assert kinds.count("degraded") == 2 and meta.get("addition_refused") and meta.get("bridged")
    lines = [r.message for r in caplog.records if "refused" in r.message]
    assert len(lines) == 2 and "tool_addition refused" in lines[0]
