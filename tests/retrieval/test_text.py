"""Identifiers, lexical terms, tool documents and sentence segments."""

from __future__ import annotations

from tooltray.memory.retrieval import doc_text, lexical_terms, segments, terms, tokenize_identifier
from tooltray.memory.retrieval.scoring import segment_spans
from tooltray.memory.tuning import ENUM_TERMS
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


def test_short_lists_of_choices_join_the_lexical_document_only() -> None:
    """A parameter's enum (or its items') names what the tool takes; a list longer than
    ``ENUM_TERMS`` (countries, zones) would only lengthen the document, and the embedded text
    stays as the vector cache holds it."""
    many = [f"zone{i}" for i in range(ENUM_TERMS + 1)]
    spec = ToolSpec(
        name="run",
        description="Run a snippet.",
        parameters={
            "type": "object",
            "properties": {
                "language": {"type": "string", "enum": ["python", "ruby", 3]},
                "formats": {"type": "array", "items": {"enum": ["markdown", "html"]}},
                "zone": {"type": "string", "enum": many},
            },
        },
    )
    words = lexical_terms(spec)
    assert {"python", "ruby", "markdown", "html"} <= set(words)
    assert "zone0" not in words and "3" not in words
    assert "python" not in doc_text(spec) and "markdown" not in doc_text(spec)


def test_sentences_are_segments_and_short_ones_join_the_previous() -> None:
    text = "Book a flight to Paris. Thanks!  Then rent a car there.\nAlso check the weather"
    assert segments(text) == [
        "Book a flight to Paris. Thanks!",
        "Then rent a car there.",
        "Also check the weather",
    ]
    assert [text[a:b] for a, b in segment_spans(text)] == segments(text)
    assert segments("one line only") == ["one line only"] and segments("  ") == []


def test_an_abbreviation_ends_no_sentence() -> None:
    """ "e.g." and "i.e." are inside a sentence: a model's one-job search that gives an example
    is one segment (stop 53), and a real full stop still ends one."""
    one = "reverse geocode coordinates to a city (e.g. Amap or Gaode), i.e. the address lookup"
    assert segments(one) == [one]
    two = "Look up the coordinates of the old town, e.g. Shanghai. Then book the fastest train."
    assert len(segments(two)) == 2
