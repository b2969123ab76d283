"""Bundle lift, pull-in of small bundles, deterministic tie-breaks (lexical index, real BM25)."""

from __future__ import annotations

import numpy as np

from tooltray.memory.retrieval import Bundles, ToolIndex
from tooltray.memory.tuning import PULL_MAX_BUNDLE
from tooltray.tools.spec import ToolSpec


def tool(name: str, description: str, bundle: str | None = None, **extra: object) -> ToolSpec:
    return ToolSpec(name=name, description=description, bundle=bundle, **extra)  # type: ignore[arg-type]


def filler(n: int) -> list[ToolSpec]:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    return [tool(f"misc_{i}", f"Handle {words[i % 8]} item {i} records.") for i in range(n)]


def test_best_mate_and_lift_arithmetic() -> None:
    b = Bundles(["a", "a", "b", None, "a", "b", "c"])
    s = np.array([1.0, 3.0, 2.0, 5.0, 3.0, -1.0, 4.0])
    assert b.best_mate(s).tolist() == [3.0, 3.0, -1.0, -np.inf, 3.0, 2.0, -np.inf]
    lifted = b.lift(s)
    mate = 0.6 / np.sqrt(2)  # LIFT x the best mate's 3.0, shared by a bundle of three
    # "c" has one tool, its own best mate (+0.2 x 4.0); a tool in no bundle has none
    assert np.allclose(lifted, [1 + mate, 3 + mate, 2, 5, 3 + mate, -0.6, 4.8])


def test_a_servers_lone_tool_keeps_its_place_beside_a_look_alike_with_a_mate() -> None:
    specs = [
        tool("alpha_get_weather", "Get the weather forecast for a city.", "alpha"),
        tool("beta_get_weather", "Get the weather forecast for a city.", "beta"),
        tool("beta_hourly", "Hourly weather for a city, next day.", "beta"),
        *filler(40),
    ]
    names = [h.name for h in ToolIndex(specs).search("weather forecast for a city", 3)]
    assert names.index("alpha_get_weather") < names.index("beta_get_weather")


def test_a_strong_match_pulls_in_its_small_bundle() -> None:
    specs = [
        tool("sql_query_table", "Run a SQL query against a table.", "sql"),
        tool("sql_create_table", "Create a new table with columns.", "sql"),
        tool("sql_drop_table", "Delete a table.", "sql"),
        *filler(40),
    ]
    hits = ToolIndex(specs).picks("run a sql query on the orders table", 16)
    by_name = {h.name: h for h in hits}
    assert hits[0].name == "sql_query_table" and hits[0].strong
    assert {"sql_create_table", "sql_drop_table"} <= set(by_name)
    assert not any(n.startswith("misc") for n in by_name)


def test_large_bundles_are_not_pulled_in_whole() -> None:
    size = PULL_MAX_BUNDLE + 8
    big = [tool(f"fs_op_{i}", f"File system operation {i} on paths.", "fs") for i in range(size)]
    specs = [tool("fs_copy", "Copy a file to a new place.", "fs"), *big, *filler(40)]
    hits = ToolIndex(specs).picks("copy the file", size + 16)
    assert hits[0].name == "fs_copy"
    assert len([h for h in hits if h.name.startswith("fs_op")]) < size


def test_a_weak_match_pulls_in_nothing() -> None:
    specs = [
        tool("pay_invoice", "Pay an invoice.", "billing"),
        tool("refund_order", "Refund an order.", "billing"),
        tool("ship_parcel", "Ship a parcel by courier.", "shipping"),
        tool("track_parcel", "Track where a parcel is.", "shipping"),
        *filler(40),
    ]
    hits = ToolIndex(specs).picks("ship my parcel and pay", 16)
    assert {h.name for h in hits[:2]} >= {"ship_parcel"}
    weak = [h for h in hits if not h.strong and h.source != "bundle"]
    pulled = {h.name for h in hits if h.source == "bundle"}
    assert all(h.name.split("_")[0] != p.split("_")[0] for h in weak for p in pulled)


def test_ties_break_by_priority_then_tags_then_catalog_order() -> None:
    same = "Look up a record."
    specs = [
        tool("lookup_red", same),
        tool("lookup_tan", same, priority=2),
        tool("lookup_sky", same, tags=("customer",)),
        tool("lookup_ivy", same),
        *filler(20),
    ]
    index = ToolIndex(specs)
    hits = index.search("look up the customer record", 4)
    assert [h.name for h in hits] == ["lookup_tan", "lookup_sky", "lookup_red", "lookup_ivy"]
    assert [h.name for h in index.search("look up the record", 4)][:2] == [
        "lookup_tan",
        "lookup_red",
    ]


def test_an_excluded_best_match_brings_its_best_siblings_after_the_answer() -> None:
    car = ["press the brake pedal", "lock the doors", "set the headlights", "fill the fuel tank"]
    car += ["check the tire pressure", "set the cruise control", "adjust the climate control"]
    specs = [
        tool("car_start_engine", "Start the engine of the car.", "car"),
        *[tool(f"car_{i}", f"Car control: {what}.", "car") for i, what in enumerate(car)],
        *filler(40),
    ]
    index = ToolIndex(specs)
    query = "start the engine of the car"
    plain = [h.name for h in index.picks(query, 3, exclude={"car_start_engine"}, pull=False)]
    hits = index.picks(query, 3, exclude={"car_start_engine"}, pull=False, siblings=5)
    kin = [h.name for h in hits]
    assert kin[: len(plain)] == plain and "car_start_engine" not in kin
    added = hits[len(plain) :]
    left = len(car) - len([n for n in plain if n.startswith("car_")])
    assert 0 < len(added) == min(5, left) and all(h.name.startswith("car_") for h in added)
    assert [h.score for h in added] == sorted((h.score for h in added), reverse=True)
    assert all(h.source == "bundle" for h in added)
    other = [h.name for h in index.picks(query, 3, exclude={"misc_1"}, pull=False, siblings=5)]
    assert other[0] == "car_start_engine" and len(other) <= 3
