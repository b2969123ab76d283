"""ToolRegistry: two layers, clash detection, allow/deny, resolution, bundles, executors."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tooltray.tools.errors import (
    DuplicateToolError,
    ToolNotAllowedError,
    TooltrayError,
    UnknownToolError,
)
from tooltray.tools.layer import ToolLayer
from tooltray.tools.registry import ToolRegistry
from tooltray.tools.spec import Bundle, ToolSpec


def spec(name: str, bundle: str | None = None, source: str = "manual") -> ToolSpec:
    return ToolSpec(name=name, description=f"Run {name}.", bundle=bundle, source=source)


@pytest.fixture
def registry(tools: list[ToolSpec], sample: tuple[list[ToolSpec], list[Bundle]]) -> ToolRegistry:
    return ToolRegistry(tools, bundles=sample[1])


def test_layers_merge_catalog_then_instance(registry: ToolRegistry) -> None:
    registry.register(spec("late_tool"))
    names = [s.name for s in registry.allowed()]
    assert names[-1] == "late_tool"
    assert names[:2] == ["read_file", "write_file"]
    assert len(registry.catalog) == 6 and len(registry.instance) == 1
    assert registry.unregister("late_tool").name == "late_tool"
    assert "late_tool" not in [s.name for s in registry.allowed()]


def test_clash_within_layer_names_both_sources(registry: ToolRegistry) -> None:
    registry.register(spec("dup", source="callable"))
    with pytest.raises(DuplicateToolError) as err:
        registry.register(spec("dup", source="openai"))
    assert "'openai'" in str(err.value) and "'callable'" in str(err.value)


def test_clash_across_layers_raises(registry: ToolRegistry) -> None:
    with pytest.raises(DuplicateToolError, match="catalog layer"):
        registry.register(spec("read_file", source="mcp:fs"))
    assert len(registry.instance) == 0


def test_clash_after_mcp_prefix_stripping_raises(registry: ToolRegistry) -> None:
    registry.register(spec("gh__search"))
    with pytest.raises(DuplicateToolError, match="mcp__ prefix is stripped"):
        registry.register(spec("mcp__gh__search"))
    with pytest.raises(DuplicateToolError):
        ToolLayer("catalog", [spec("mcp__a__x"), spec("a__x")])


def test_two_servers_tools_of_one_name_load_and_resolve() -> None:
    registry = ToolRegistry([spec("alpha__search", "alpha"), spec("beta__search", "beta")])
    assert [s.name for s in registry.allowed()] == ["alpha__search", "beta__search"]
    assert registry.resolve("mcp__beta__search").name == "beta__search"
    with pytest.raises(UnknownToolError) as err:  # two tools answer to "search": ask which
        registry.resolve("search")
    assert err.value.candidates[:2] == ["alpha__search", "beta__search"]
    alone = ToolRegistry([spec("alpha__search"), spec("read")])
    assert alone.resolve("search").name == "alpha__search"  # one owner: resolved as before


def test_shared_catalog_growing_into_a_clash_fails_loudly() -> None:
    shared = ToolLayer("catalog", [spec("one")])
    agent = ToolRegistry(shared)
    agent.register(spec("two"))
    shared.add(spec("two"))
    with pytest.raises(DuplicateToolError):
        agent.allowed()


def test_shared_catalog_serves_many_registries() -> None:
    shared = ToolLayer("catalog", [spec("one", "b"), spec("other", "b")])
    a, b = ToolRegistry(shared, allow={"one"}), ToolRegistry(shared)
    a.register(spec("mine"))
    assert [s.name for s in a.allowed()] == ["one"]
    assert [s.name for s in b.allowed()] == ["one", "other"]
    assert b.get("mine") is None


def test_allow_list_filters_everything_downstream(registry: ToolRegistry) -> None:
    registry.allow = {"read_file", "bundle:weather"}
    assert [s.name for s in registry.allowed()] == ["read_file", "get_weather", "weather_alerts"]
    assert [b.name for b in registry.bundles()] == ["files", "weather"]
    assert registry.bundles()[0].members == ("read_file",)
    assert registry.is_allowed("get_weather") and not registry.is_allowed("write_file")
    assert registry.get("write_file") is not None  # get is exact, not filtered
    with pytest.raises(ToolNotAllowedError) as err:
        registry.resolve("write_file")
    message = str(err.value)
    assert "exists but is not allowed" in message and "add 'write_file' to allow" in message


def test_deny_wins_and_patterns_match(registry: ToolRegistry) -> None:
    registry.allow = {"*_file", "now"}
    registry.deny = {"write_*"}
    assert [s.name for s in registry.allowed()] == ["read_file", "now"]
    with pytest.raises(ToolNotAllowedError, match="deny-list"):
        registry.resolve("write_file")
    registry.allow = None
    assert len(registry) == 5


def test_resolve_exact_prefixed_and_unknown(registry: ToolRegistry) -> None:
    assert registry.resolve("read_file").name == "read_file"
    assert registry.resolve("mcp__files__read_file").name == "read_file"
    assert registry.resolve("files__list_dir").name == "list_dir"
    registry.register(spec("mcp__gh__create_issue"))
    assert registry.resolve("create_issue").name == "mcp__gh__create_issue"
    with pytest.raises(UnknownToolError) as err:
        registry.resolve("read_fil")
    assert err.value.candidates[0] == "read_file"
    assert "Did you mean: read_file" in str(err.value)


def test_did_you_mean_skips_disallowed_tools(registry: ToolRegistry) -> None:
    registry.deny = {"write_file"}
    with pytest.raises(UnknownToolError) as err:
        registry.resolve("write_fil")
    assert "write_file" not in err.value.candidates


def test_bundles_follow_spec_bundle_with_descriptions(registry: ToolRegistry) -> None:
    bundles = registry.bundles()
    assert [(b.name, b.members) for b in bundles] == [
        ("files", ("read_file", "write_file", "list_dir")),
        ("weather", ("get_weather", "weather_alerts")),
    ]
    assert bundles[0].description == "Read, write and list files in the workspace."
    registry.add_bundle(Bundle(name="files", description="Workspace files."))
    registry.register(spec("rm", "files"))
    assert registry.bundles()[0].description == "Workspace files."
    assert registry.bundles()[0].members[-1] == "rm"


def test_version_and_fingerprint_track_the_allowed_set(registry: ToolRegistry) -> None:
    v0, f0 = registry.version, registry.fingerprint
    assert registry.fingerprint == f0  # stable when nothing changes
    registry.register(spec("extra"))
    assert registry.version > v0 and registry.fingerprint != f0
    f1 = registry.fingerprint
    registry.deny = {"extra"}
    assert registry.fingerprint == f0 != f1
    registry.deny = set()
    assert registry.fingerprint == f1


def test_executors_and_register_callable(registry: ToolRegistry) -> None:
    def add(a: int, b: int = 1) -> int:
        """Add two numbers."""
        return a + b

    made = registry.register_callable(add, bundle="math")
    assert made.source == "callable" and made.bundle == "math"
    run = registry.executor("add")
    assert run is not None and run(a=2, b=3) == 5
    assert registry.executor("read_file") is None
    registry.deny = {"add"}
    with pytest.raises(ToolNotAllowedError):
        registry.executor("add")


def test_unregister_rules(registry: ToolRegistry) -> None:
    with pytest.raises(TooltrayError, match="deny="):
        registry.unregister("read_file")
    with pytest.raises(UnknownToolError):
        registry.unregister("never_registered")


def test_register_rejects_non_specs_and_bad_policy() -> None:
    registry = ToolRegistry()
    not_a_spec: Any = {"name": "x"}
    with pytest.raises(TooltrayError, match="Expected a ToolSpec"):
        registry.register(not_a_spec)
    with pytest.raises(TooltrayError, match="set of names"):
        ToolRegistry(allow="read_file")


def test_concurrent_registration_keeps_every_tool() -> None:
    registry = ToolRegistry([spec(f"cat_{i}") for i in range(50)])

    def work(k: int) -> None:
        for i in range(40):
            registry.register(spec(f"t{k}_{i}"))
            registry.allowed()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(registry.allowed()) == 50 + 160


def test_from_catalog_on_real_corpus() -> None:
    registry = ToolRegistry.from_catalog("/work/shared/data/bfcl_multiturn/tools.jsonl")
    assert len(registry) == 130 and len(registry.bundles()) == 9
    assert registry.resolve("mcp__GorillaFileSystem__cd").name == "cd"


def test_non_string_names_are_unknown(registry: ToolRegistry) -> None:
    bad: Any = ["read_file"]
    with pytest.raises(UnknownToolError):
        registry.resolve(bad)
    assert not registry.is_allowed(bad)
