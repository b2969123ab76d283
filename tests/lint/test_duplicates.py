"""Near duplicates with the real embedder and tooltray's own index: a true positive, a near miss."""

from __future__ import annotations

from typing import Any

import pytest

from tooltray.memory.lint import lint
from tooltray.memory.retrieval.similarity import cosine_stats, name_similarity, unit_vectors
from tooltray.memory.retrieval.twins import duplicate_findings

TWIN = "Send an email message to a recipient address with a subject and body."


def near_twins(tools: list[Any], embedder: Any) -> list[Any]:
    return [f for f in lint(tools, embedder) if f.kind == "near-duplicate"]


def test_near_twins_are_flagged_where_the_retriever_confuses_them(
    diverse: list[Any], make: Any, embedder: Any
) -> None:
    """The same description with another schema is no exact twin, but the retriever cannot
    tell which of the two a request made of that description wants."""
    tools = [*diverse, make("send_email", TWIN), make("send_mail", TWIN, cc="string")]
    (dup,) = near_twins(tools, embedder)
    assert set(dup.tools) == {"send_email", "send_mail"}
    assert "retriever confuses them" in dup.evidence and "z " in dup.evidence


@pytest.mark.parametrize("others", [0, 5, 12])
def test_exact_twins_are_flagged_whatever_the_catalog_size(
    diverse: list[Any], make: Any, embedder: Any, others: int
) -> None:
    """Byte-identical description and schema: an error on 2, 7 and 14 tools, even without an
    embedder (the z-score over a handful of pairs used to miss them)."""
    tools = [*diverse[:others], make("send_email", TWIN), make("send_mail", " " + TWIN.upper())]
    for used in (embedder, None):
        (dup,) = near_twins(tools, used)
        assert set(dup.tools) == {"send_email", "send_mail"} and dup.severity == "error"
        assert "same description and parameters" in dup.evidence
    assert near_twins([*tools, make("noted", ""), make("empty", "")], None) == [dup]


def test_same_description_other_parameters_is_not_an_exact_twin(
    diverse: list[Any], make: Any
) -> None:
    tools = [*diverse[:5], make("send_email", TWIN), make("send_mail", TWIN, cc="string")]
    assert near_twins(tools, None) == []


def test_related_but_distinct_tools_are_not_flagged(
    diverse: list[Any], make: Any, embedder: Any
) -> None:
    tools = [
        *diverse,
        make("send_email", TWIN),
        make("read_inbox", "List the newest messages received in the user's inbox folder."),
    ]
    assert [f for f in lint(tools, embedder) if f.kind == "near-duplicate"] == []


def test_one_sided_confusion_names_the_lost_tool_first(
    diverse: list[Any], make: Any, embedder: Any
) -> None:
    tools = [
        *diverse,
        make("get_forecast", "Weather forecast and temperature for a city, wind and humidity."),
    ]
    vectors = unit_vectors(tools, embedder)
    found = duplicate_findings(tools, vectors, lambda query: "get_weather")
    (dup,) = found
    assert dup.tools[0] == "get_forecast" and "get_forecast's description ranks" in dup.evidence


def test_calibration_is_against_the_catalog(diverse: list[Any], embedder: Any) -> None:
    mean, std = cosine_stats(unit_vectors(diverse, embedder))
    assert 0.0 < mean < 0.5 and 0.02 < std < 0.3
    assert name_similarity("mcp__a__send_mail", "sendMail") == 1.0


def test_name_similarity_ignores_a_shared_prefix() -> None:
    assert name_similarity("files_copy", "files_edit") < 0.5
    assert name_similarity("send_email", "send_mail") > 0.8
