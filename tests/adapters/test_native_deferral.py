"""Provider-native deferral against a recorded exchange (hand-written from the documented formats,
see the fixture's ``_provenance``): tooltray renders the same request entries, its retriever
answers the search the same way, and the visible tools cost about what the meta-tools view does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tooltray.memory.adapters.native_search import NativeDeferral
from tooltray.memory.config import Settings
from tooltray.memory.core.trinket import ToolLoaderTrinket
from tooltray.memory.store import Store
from tooltray.tools.demo import load_demo_catalog
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.render import canonical_json, count_tokens

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "native_deferral_exchange.json"
EXCHANGE: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(params=["anthropic", "responses"], scope="module")
def session(request: Any, tmp_path_factory: Any) -> Iterator[tuple[str, ToolLoaderTrinket]]:
    """A real trinket over the demo catalog on ``path`` (no instructions), shared by the tests.

    Each test uses its own session id, so the shared trinket only saves embedding the catalog.
    """
    path = request.param
    url = f"sqlite:///{tmp_path_factory.mktemp(path) / 'tooltray.db'}"
    tools, bundles = load_demo_catalog()
    settings = Settings(db=url, path=path, instructions="")
    trinket = ToolLoaderTrinket(ToolRegistry(tools, bundles=bundles), Store(url), settings=settings)
    yield path, trinket
    trinket.close()


def by_key(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(t.get("name", t.get("type"))): t for t in tools}


def deferred_names(tools: list[dict[str, Any]]) -> set[str]:
    """Names marked ``defer_loading``, at the top level or inside a namespace."""
    inner = [t for tool in tools for t in tool.get("tools", [])]
    return {str(t["name"]) for t in [*tools, *inner] if t.get("defer_loading")}


def search_call(path: str) -> tuple[str, str]:
    if path == "anthropic":
        use = EXCHANGE[path]["response_1"]["content"][-1]
        return use["id"], use["input"]["query"]
    call = EXCHANGE[path]["response_1"]["output"][0]
    return call["call_id"], call["arguments"]["query"]


def test_native_deferral_request_matches_the_recorded_entries(
    session: tuple[str, ToolLoaderTrinket],
) -> None:
    path, trinket = session
    sent = by_key(NativeDeferral(trinket, "d-request", path).start([EXCHANGE["user"]]))
    for key, entry in by_key(EXCHANGE[path]["request_1"]["tools_excerpt"]).items():
        if entry.get("type") == "namespace":
            assert {k: v for k, v in sent[key].items() if k != "tools"} == {
                k: v for k, v in entry.items() if k != "tools"
            }
            assert entry["tools"][0] in sent[key]["tools"]
        else:
            assert canonical_json(sent[key]) == canonical_json(entry)
    shown = {k for k, t in sent.items() if not t.get("defer_loading") and "tools" not in t}
    allowed = {spec.name for spec in trinket.registry.allowed()}
    assert deferred_names(list(sent.values())) == allowed - shown  # every other tool, deferred


def test_native_deferral_search_answers_as_recorded_and_keeps_the_prefix(
    session: tuple[str, ToolLoaderTrinket],
) -> None:
    path, trinket = session
    native = NativeDeferral(trinket, "d-search", path)
    before = canonical_json(native.start([EXCHANGE["user"]]))
    call_id, query = search_call(path)
    answer = native.search(call_id, query)
    recorded = (
        EXCHANGE[path]["request_2_last_message"]["content"][0]
        if path == "anthropic"
        else EXCHANGE[path]["request_2_input_tail"][-1]
    )
    assert answer == recorded
    wanted = "shopping_track_order"
    assert wanted in trinket.loaded("d-search") and canonical_json(native.tools()) == before


def test_native_deferral_shows_about_the_tokens_of_the_meta_tools(
    session: tuple[str, ToolLoaderTrinket],
) -> None:
    path, trinket = session
    native = NativeDeferral(trinket, "d-tokens", path)
    sent = native.start([EXCHANGE["user"]])
    view = trinket.prepare("d-tokens", [{"role": "user", "content": EXCHANGE["user"]}])
    ours = view.tool_tokens + count_tokens(view.system_prefix).n
    shown = [
        {k: v for k, v in t.items() if k != "tools"} for t in sent if not t.get("defer_loading")
    ]
    native_tokens = count_tokens(canonical_json(shown)).n
    # Anthropic's visible part is ~9% below the meta-tools view; Responses' namespaces carry
    # what the bundle menu does and since the menu dropped its member counts cost ~3% more
    assert native_tokens < 1.05 * ours
    assert count_tokens(canonical_json(sent)).n > 3 * ours  # but every schema is still sent
