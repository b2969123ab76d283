"""The bundled demo: catalog, CORE, skills, scripted conversation and simulated execution."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tooltray.memory.metatools.meta_tools import meta_tool_specs
from tooltray.memory.retrieval.skills import load_skills
from tooltray.tools.demo import (
    demo_catalog_path,
    demo_core,
    demo_registry,
    demo_script,
    demo_skills_dir,
    load_demo_catalog,
)
from tooltray.tools.demo.executors import execute_demo_tool
from tooltray.tools.spec import Bundle, ToolSpec, check_parameters

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[2]
META = {spec.name: spec for spec in meta_tool_specs()}


@pytest.fixture(scope="module")
def demo() -> tuple[list[ToolSpec], list[Bundle]]:
    loaded: tuple[list[ToolSpec], list[Bundle]] = load_demo_catalog()
    return loaded


@pytest.fixture(scope="module")
def specs(demo: tuple[list[ToolSpec], list[Bundle]]) -> dict[str, ToolSpec]:
    return {spec.name: spec for spec in demo[0]}


def run(name: str, **args: Any) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(execute_demo_tool(name, args))
    return out


def minimal(schema: dict[str, Any]) -> Any:
    """The smallest value satisfying ``schema`` (required properties only)."""
    kind = schema.get("type", "object")
    kind = next(k for k in kind if k != "null") if isinstance(kind, list) else kind
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        props = schema.get("properties", {})
        return {key: minimal(props[key]) for key in schema.get("required", [])}
    if kind == "array":
        return [minimal(schema.get("items", {"type": "string"}))] * max(
            1, schema.get("minItems", 0)
        )
    if kind in ("integer", "number"):
        return schema.get("minimum", 2) if kind == "integer" else float(schema.get("minimum", 2))
    if kind == "boolean":
        return False
    formats = {"email": "a@example.com", "uri": "https://example.com/page"}
    return formats.get(schema.get("format", ""), "x" * max(1, schema.get("minLength", 1)))


def test_catalog_size_bundles_and_names(demo: tuple[list[ToolSpec], list[Bundle]]) -> None:
    tools, bundles = demo
    names = [t.name for t in tools]
    assert len(tools) >= 110 and len(set(names)) == len(names)
    assert len(bundles) >= 13
    assert {t.source for t in tools} == {"demo"}
    for bundle in bundles:
        assert bundle.description.strip(), f"bundle {bundle.name} has no description"
        assert all(name.startswith(bundle.name + "_") for name in bundle.members)
    assert sum(len(b.members) for b in bundles) == len(tools)


def test_jsonl_is_the_plain_four_field_format() -> None:
    lines = demo_catalog_path().read_text(encoding="utf-8").splitlines()
    bundles = json.loads((demo_catalog_path().parent / "demo_bundles.json").read_text("utf-8"))
    groups = set()
    for line in lines:
        row = json.loads(line)
        assert set(row) == {"name", "description", "parameters", "group"}, row["name"]
        sentences = re.findall(r"[.!?](?:\s|$)", row["description"])
        assert 1 <= len(sentences) <= 3, row["name"]
        groups.add(row["group"])
    assert groups == set(bundles["bundles"])


def test_every_schema_is_valid(specs: dict[str, ToolSpec]) -> None:
    for spec in specs.values():
        Draft202012Validator.check_schema(spec.parameters)
        assert check_parameters(spec.parameters, spec.name) == spec.parameters
        props = spec.parameters["properties"]
        assert all("description" in p for p in props.values()), spec.name
        assert set(spec.parameters.get("required", [])) <= set(props), spec.name
    sizes = {len(s.parameters["properties"]) for s in specs.values()}
    assert 0 in sizes and max(sizes) >= 7


def test_core_is_small_existing_and_pinned(specs: dict[str, ToolSpec]) -> None:
    core = demo_core()
    assert 3 <= len(core) <= 5 and set(core) <= set(specs)
    assert {n for n, s in specs.items() if s.pinned} == set(core)


def test_skills_need_only_catalog_tools(specs: dict[str, ToolSpec]) -> None:
    skills = load_skills(demo_skills_dir())
    assert len(skills) == 4
    for skill in skills:
        assert skill.description and len(skill.tools_required) >= 3
        missing = set(skill.tools_required) - set(specs)
        assert not missing, f"{skill.name} needs unknown tools {missing}"


def test_script_calls_are_valid_gold(specs: dict[str, ToolSpec]) -> None:
    turns = demo_script()
    assert len(turns) == 10
    notes = [t.get("note") for t in turns]
    assert notes.count("expect-miss") >= 1
    for number, turn in enumerate(turns, 1):
        assert turn["user"].strip() and turn["assistant"].strip() and turn["calls"], number
        for call in turn["calls"]:
            spec = specs.get(call["name"]) or META.get(call["name"])
            assert spec is not None, f"turn {number}: unknown tool {call['name']}"
            args, schema = call["arguments"], spec.parameters
            assert set(schema.get("required", [])) <= set(args), (number, call)
            if schema.get("additionalProperties") is False:
                assert set(args) <= set(schema["properties"]), (number, call)
            errors = list(Draft202012Validator(schema).iter_errors(args))
            assert not errors, (number, call["name"], errors[0].message if errors else "")


def test_script_recoveries_name_only_menu_bundles_or_write_a_query(
    demo: tuple[list[ToolSpec], list[Bundle]],
) -> None:
    """A model sees the bundle menu, not the catalog: a recovery may name bundles or ask a query.

    Every tool the model calls that is not CORE can be missing from its prompt, so each carries the
    ``load_tools`` arguments the model would write then; none may name a tool (the prompt did not
    show it), and the script never scripts a fallback (the model falls back only when stuck).
    """
    bundles = {b.name for b in demo[1]}
    core = set(demo_core())
    for number, turn in enumerate(demo_script(), 1):
        for call in turn["calls"]:
            assert call["name"] not in META, (number, "meta-tools are the model's choice")
            recover = call.get("recover")
            if call["name"] in core:
                continue
            assert recover, (number, call["name"], "needs a recover for when it is not offered")
            assert set(recover) <= {"tools", "query"} and recover, (number, recover)
            assert set(recover.get("tools", [])) <= bundles, (number, recover)
            assert isinstance(recover.get("query", ""), str), (number, recover)


def test_script_calls_execute_and_chain() -> None:
    turns = demo_script()
    for call in (c for t in turns for c in t["calls"] if c["name"] not in META):
        assert "error" not in run(call["name"], **call["arguments"]), call
    hotels = run("travel_search_hotels", **turns[1]["calls"][1]["arguments"])["results"]
    assert turns[2]["calls"][0]["arguments"]["hotel_id"] == hotels[0]["hotel_id"]
    assert all(h["price_per_night"] <= 180 and "gym" in h["amenities"] for h in hotels)


def test_every_tool_runs_on_minimal_arguments(specs: dict[str, ToolSpec]) -> None:
    for name, spec in specs.items():
        args = minimal(spec.parameters)
        assert not list(Draft202012Validator(spec.parameters).iter_errors(args)), name
        text = execute_demo_tool(name, args)
        out = json.loads(text)
        assert isinstance(out, dict) and out, name
        assert "invalid arguments" not in out.get("error", ""), (name, out)
        assert execute_demo_tool(name, args) == text, f"{name} is not deterministic"


@pytest.mark.parametrize(
    ("name", "args", "key", "expected"),
    [
        ("math_evaluate", {"expression": "(1200 * 0.15) + sqrt(16)"}, "result", 184),
        ("math_evaluate", {"expression": "2 ** 10 // 3 % 7"}, "result", 341 % 7),
        ("math_solve_equation", {"equation": "3*x + 5 = 20"}, "solution", 5),
        ("math_solve_equation", {"equation": "2*(y - 1) = y / 2", "variable": "y"},
         "solution", 4 / 3),
        ("math_convert_units", {"value": 100, "from_unit": "C", "to_unit": "F"}, "result", 212),
        ("math_convert_units", {"value": 10, "from_unit": "km", "to_unit": "mi"},
         "result", 6.213712),
        ("math_currency_convert", {"amount": 100, "from_currency": "EUR", "to_currency": "USD"},
         "result", 108.0),
        ("math_percentage_change", {"old": 80, "new": 100}, "percent_change", 25.0),
        ("math_compound_interest", {"principal": 1000, "annual_rate": 5, "years": 2,
                                    "compounds_per_year": 1}, "future_value", 1102.5),
        ("math_loan_payment", {"principal": 1200, "annual_rate": 0, "months": 12},
         "monthly_payment", 100.0),
        ("math_matrix_multiply", {"a": [[1, 2], [3, 4]], "b": [[5, 6], [7, 8]]},
         "result", [[19, 22], [43, 50]]),
        ("math_gcd_lcm", {"numbers": [12, 18, 30]}, "gcd", 6),
        ("math_gcd_lcm", {"numbers": [4, 6]}, "lcm", 12),
    ],
)  # fmt: skip
def test_math_tools_compute(name: str, args: dict[str, Any], key: str, expected: Any) -> None:
    got = run(name, **args)[key]
    assert got == (expected if isinstance(expected, list) else pytest.approx(expected))


def test_statistics_match_hand_computed_values() -> None:
    out = run("math_statistics", values=[2, 4, 4, 4, 5, 5, 7, 9])
    assert out["mean"] == 5 and out["median"] == 4.5 and out["sum"] == 40 and out["count"] == 8
    assert out["stdev"] == pytest.approx(2.13808994)
    assert run("math_statistics", values=[1, 3], measures=["max"]) == {"max": 3}


@pytest.mark.parametrize(
    ("name", "args", "fragment"),
    [
        ("math_evaluate", {}, "'expression' is a required property"),
        ("math_evaluate", {"expression": "1", "precision": 2}, "Additional properties"),
        ("weather_forecast", {"location": "Oslo", "days": 30}, "30 is greater than the maximum"),
        ("email_send", {"to": "dana@example.com", "subject": "s", "body": "b"}, "is not of type"),
        ("math_evaluate", {"expression": "__import__('os')"}, "unsupported element"),
        ("math_evaluate", {"expression": "1 / 0"}, "division by zero"),
        ("math_evaluate", {"expression": "9 ** 99999"}, "too large"),
        ("math_convert_units", {"value": 1, "from_unit": "kg", "to_unit": "km"}, "cannot convert"),
        ("math_percentage_change", {"old": 0, "new": 3}, "must not be zero"),
        ("files_read", {"path": "nope.txt"}, "src/dates.py"),
        ("files_edit", {"path": "README.md", "old_text": "zzz", "new_text": "y"}, "not found"),
        ("files_write", {"path": "README.md", "content": "x"}, "overwrite=true"),
        ("git_comit", {"message": "x"}, "git_commit"),
    ],
)
def test_bad_input_returns_an_error_that_says_what_to_do(
    name: str, args: dict[str, Any], fragment: str
) -> None:
    out = run(name, **args)
    assert set(out) == {"error"} and fragment in out["error"], out


def test_long_results_for_compression_demos() -> None:
    doc = execute_demo_tool("documents_read", {"document_id": "doc_agenda"})
    page = execute_demo_tool("web_fetch", {"url": "https://example.com/post"})
    assert len(doc) > 3000 and len(page) > 3000
    assert "Day 2, session" in json.loads(doc)["content"]
    cut = run("web_fetch", url="https://example.com/post", max_chars=200)
    assert cut["chars"] == 200 and len(cut["content"]) == 200


def test_results_depend_on_arguments() -> None:
    oslo, lima = run("weather_current", location="Oslo"), run("weather_current", location="Lima")
    assert (
        oslo != lima
        and oslo["temperature_c"] == run("weather_forecast", location="Oslo")["temperature_c"]
    )
    assert len(run("weather_forecast", location="Oslo", days=4)["days"]) == 4
    dana = run("contacts_search", query="dana")["results"][0]
    assert dana["email"] == "dana.whitfield@example.com"
    hits = run("files_search", query="parse_range")["matches"]
    assert {h["path"] for h in hits} == {"src/dates.py", "tests/test_dates.py"}
    assert run("files_list", path="src")["entries"] == ["src/dates.py"]
    fixed = run("files_edit", path="src/dates.py", old_text=".days)]", new_text=".days + 1)]")
    assert "range((end - start).days + 1)" in fixed["content"]


def test_demo_registry_executes_through_the_registry() -> None:
    registry = demo_registry()
    assert len(registry.allowed()) == len(load_demo_catalog()[0])
    branch = registry.executor("git_branch_create")
    assert branch is not None
    assert json.loads(branch(name="fix/dates"))["name"] == "fix/dates"
    evaluate = registry.executor("math_evaluate")
    assert evaluate is not None and json.loads(evaluate(expression="6*7"))["result"] == 42


def test_package_data_patterns_cover_the_demo_files() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    data = config["tool"]["setuptools"]["package-data"]
    for package, folder in (("tooltray.tools.demo", "tools/demo"), ("tooltray.memory", "memory")):
        base = ROOT / folder
        covered = {p for pattern in data[package] for p in base.glob(pattern) if p.is_file()}
        wanted = {p for p in (base / "data").rglob("*") if p.is_file()}
        assert wanted and wanted <= covered, sorted(map(str, wanted - covered))
