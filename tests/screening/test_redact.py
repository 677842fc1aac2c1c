"""Redaction keeps QA records valid: offsets re-mapped, answers rewritten consistently."""

from __future__ import annotations

import pytest

from screening.redact import Span, merge_spans, occurrences, redact_answers, redact_text
from tasks.records import check_answers_at_offsets


def test_overlapping_spans_merge_under_the_strongest_finding() -> None:
    spans = [
        Span(0, 10, "PHONE_NUMBER", 0.4),
        Span(2, 14, "IP_ADDRESS", 0.6),
        Span(20, 25, "PERSON"),
    ]
    assert merge_spans(spans) == [Span(0, 14, "IP_ADDRESS", 0.6), Span(20, 25, "PERSON")]


def test_redact_text_replaces_spans_and_maps_offsets() -> None:
    text = "Mail ann@x.io or call 555-0100 today"
    email, phone = text.index("ann@"), text.index("555")
    spans = [Span(email, email + 8, "EMAIL_ADDRESS"), Span(phone, phone + 8, "PHONE_NUMBER")]
    new, offsets = redact_text(text, spans)
    assert new == "Mail <EMAIL_ADDRESS> or call <PHONE_NUMBER> today"
    assert new[offsets.start(text.index("today")) :] == "today"
    assert offsets.start(7) == 5 and offsets.end(7) == 5 + len("<EMAIL_ADDRESS>")  # inside a span
    assert offsets.start(0) == 0


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("3 days", "3 days"),  # after the redaction: shifted
        ("Maria Gonzalez", "<PERSON>"),  # exactly the redacted value
        ("Gonzalez", "<PERSON>"),  # inside it
        ("Maria Gonzalez reported", "<PERSON> reported"),  # overlapping it
        ("Ticket", "Ticket"),  # before it: unchanged
    ],
)
def test_answers_are_rederived_from_the_redacted_context(answer: str, expected: str) -> None:
    context = "Ticket from Maria Gonzalez reported an outage of 3 days."
    person = Span(context.index("Maria"), context.index("Maria") + len("Maria Gonzalez"), "PERSON")
    answers = {"text": [answer], "answer_start": [context.index(answer)]}
    new_context, new_answers = redact_answers(context, answers, [person])
    assert new_answers["text"] == [expected]
    check_answers_at_offsets(
        {"context": new_context, "answers": new_answers}
    )  # raises if an answer is not at its start


def test_occurrences_finds_every_copy_but_ignores_tiny_values() -> None:
    assert occurrences("Ann met Ann", "Ann", "PERSON") == [
        Span(0, 3, "PERSON"),
        Span(8, 11, "PERSON"),
    ]
    assert occurrences("Al and Al", "Al", "PERSON") == []
