"""Description, parameter, schema-size and boilerplate checks: a true positive and a near miss."""

from __future__ import annotations

from typing import Any

from tooltray.memory.lint.boilerplate import boilerplate_findings
from tooltray.memory.lint.descriptions import description_findings
from tooltray.memory.lint.params import parameter_findings
from tooltray.memory.lint.size import size_findings
from tooltray.tools.render import count_tokens, shared_spans, state_once, strip_spans

SHARED = "This tool belongs to the demo file system, which keeps every file in memory."


def test_empty_description_is_an_error(make: Any) -> None:
    found = description_findings([make("read_file", "  ")])
    assert [(f.kind, f.severity, f.tools) for f in found] == [
        ("description", "error", ("read_file",))
    ]


def test_name_only_and_very_short(make: Any) -> None:
    tools = [make("get_weather", "Get weather."), make("add", "Adds numbers.")]
    found = description_findings(tools)
    assert [f.evidence.split(":")[0] for f in found] == ["name only", "very short (2 words)"]
    assert all(f.severity == "warning" for f in found)


def test_description_near_miss(make: Any) -> None:
    text = "Get the weather forecast for a city."  # the name's words plus real content
    assert description_findings([make("get_weather", text)]) == []


def test_undescribed_parameters(make: Any) -> None:
    tool = make("send", "Send a message to a user.", to="Recipient's user id.", body=None, cc="")
    (found,) = parameter_findings([tool])
    assert found.tools == ("send",) and "2 of 3 parameters undescribed: body, cc" in found.evidence


def test_described_parameters_near_miss(make: Any) -> None:
    tool = make("send", "Send a message to a user.", to="Recipient's user id.", body="Text.")
    assert parameter_findings([tool]) == []


def _sized(make: Any, big_words: int) -> list[Any]:
    tools = [make(f"tool_{i}", f"Does task number {i} for the user quickly.") for i in range(9)]
    return [*tools, make("big", " ".join(["word"] * big_words) + ".")]


def test_schema_size_outlier(make: Any) -> None:
    (found,) = size_findings(_sized(make, 600))
    assert found.kind == "schema-size" and found.tools == ("big",) and "robust z" in found.evidence


def test_schema_size_near_miss(make: Any) -> None:
    assert size_findings(_sized(make, 40)) == []  # about 2x the median: large, not an outlier


def _bundle(make: Any, shared_by: int) -> list[Any]:
    verbs = ["Read a file.", "Write a file.", "Delete a file.", "List a folder."]
    return [
        make(f"fs_{i}", f"{SHARED} {v}" if i < shared_by else v, "files")
        for i, v in enumerate(verbs)
    ]


def test_boilerplate_with_its_token_cost(make: Any) -> None:
    (found,) = boilerplate_findings(_bundle(make, 3))
    each = count_tokens(SHARED).n
    assert found.tools == ("fs_0", "fs_1", "fs_2")
    assert f"({each} tokens) in 3 of 4" in found.evidence
    assert f"{3 * each:,} tokens, {2 * each:,} of them repeated" in found.evidence


def test_boilerplate_near_miss_half_the_bundle(make: Any) -> None:
    assert boilerplate_findings(_bundle(make, 2)) == []  # half is not "most"


def test_short_shared_phrase_is_not_boilerplate() -> None:
    texts = [f"Returns the user's account data {x}." for x in ("name", "email", "plan", "age")]
    assert shared_spans(texts) == []  # 5 shared words, under the 8-word minimum


def test_state_once_keeps_the_first_and_cuts_the_rest(make: Any) -> None:
    tools = _bundle(make, 4)
    out = state_once(tools, {"files": [SHARED]})
    assert out[0] == tools[0] and [t.description for t in out[1:]] == [
        "Write a file.",
        "Delete a file.",
        "List a folder.",
    ]
    assert strip_spans("Nothing shared here.", [SHARED]) == "Nothing shared here."
