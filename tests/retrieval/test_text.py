"""Identifiers, lexical terms, tool documents and sentence segments."""

from __future__ import annotations

from tooltray.memory.retrieval import doc_text, lexical_terms, segments, terms, tokenize_identifier
from tooltray.memory.retrieval.scoring import segment_spans
from tooltray.tools.spec import ToolSpec


def test_identifiers_split_on_separators_and_camel_case() -> None:
    assert tokenize_identifier("getUserID_v2.list-items/x") == [
        "get", "user", "id", "v2", "list", "items", "x",
    ]  # fmt: skip
    assert tokenize_identifier("HTTPServerError") == ["http", "server", "error"]
    assert tokenize_identifier("calculateNetIncome") == ["calculate", "net", "income"]


def test_terms_drop_stop_words_and_fold_plurals() -> None:
    assert terms("Please list the files in my directories") == ["list", "file", "directorie"]
    assert terms("address class") == ["address", "class"]
    assert terms("the of to") == []


def test_documents_hold_name_description_and_parameters() -> None:
    spec = ToolSpec(
        name="sendEmail",
        description="Send an email.",
        parameters={
            "type": "object",
            "properties": {"to_address": {"type": "string", "description": "Recipient."}},
        },
    )
    assert doc_text(spec) == "send email: Send an email. to_address Recipient."
    words = lexical_terms(spec)
    assert words.count("send") == 3 and "recipient" in words and "address" in words


def test_sentences_are_segments_and_short_ones_join_the_previous() -> None:
    text = "Book a flight to Paris. Thanks!  Then rent a car there.\nAlso check the weather"
    assert segments(text) == [
        "Book a flight to Paris. Thanks!",
        "Then rent a car there.",
        "Also check the weather",
    ]
    assert [text[a:b] for a, b in segment_spans(text)] == segments(text)
    assert segments("one line only") == ["one line only"] and segments("  ") == []
