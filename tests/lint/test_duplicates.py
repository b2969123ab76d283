"""Near duplicates with the real embedder and tooltray's own index: a true positive, a near miss."""

from __future__ import annotations

from typing import Any

from tooltray.memory.lint import lint
from tooltray.memory.retrieval.similarity import cosine_stats, name_similarity, unit_vectors
from tooltray.memory.retrieval.twins import duplicate_findings

TWIN = "Send an email message to a recipient address with a subject and body."


def test_twins_are_flagged_and_the_retriever_confuses_them(
    diverse: list[Any], make: Any, embedder: Any
) -> None:
    tools = [*diverse, make("send_email", TWIN), make("send_mail", TWIN)]
    found = [f for f in lint(tools, embedder) if f.kind == "near-duplicate"]
    assert len(found) == 1
    (dup,) = found
    assert set(dup.tools) == {"send_email", "send_mail"} and dup.severity == "error"
    assert "retriever confuses them" in dup.evidence and "z " in dup.evidence


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
