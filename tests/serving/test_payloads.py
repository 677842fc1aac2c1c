"""Request bodies are decoded in time linear in their size, whatever they hold (issue 27 item 2:
a 96 KB body of escaped quotes made the nesting check backtrack for 87 s on the event loop)."""

from __future__ import annotations

import json

import pytest

from serving.payloads import MAX_DEPTH, most_tokens, nesting, parse_json, record_tokens


def test_nesting_counts_arrays_and_objects_not_what_strings_hold() -> None:
    assert nesting("x") == 0 and nesting([]) == 1 and nesting({"a": [1, {"b": []}]}) == 4
    tricky = {"question": '[[[{{{"\\"]]', "context": "\\" * 9 + '"'}
    assert parse_json(json.dumps(tricky)) == tricky  # brackets and quotes in strings are text
    assert nesting(json.loads("[" * 40 + "]" * 40), stop_above=32) == 33  # stops early


def test_a_body_nested_too_deep_is_refused_at_any_depth() -> None:
    for levels in (MAX_DEPTH + 1, 5_000, 200_000):  # past the decoder's recursion limit too
        body = '{"question": "q", "context": ' + "[" * levels + "]" * levels + "}"
        with pytest.raises(ValueError, match=f"nested more than {MAX_DEPTH} levels"):
            parse_json(body)
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None


@pytest.mark.parametrize(
    "body",
    [
        b'{"context": "' + b'\\"' * 500_000,  # a 1 MB unterminated run of escaped quotes
        b'"' + b'\\"' * 500_000 + b'"',  # the same, terminated: one long string
        b"[" + b'"\\"",' * 200_000 + b'""]',  # many strings of one escaped quote
    ],
)
def test_bodies_that_made_the_check_backtrack_are_decoded_or_refused_at_once(body: bytes) -> None:
    """On the old check each of these took hours (quadratic backtracking over 1 MB); now the C
    decoder reads them in one pass and the nesting walk sees at most a flat list."""
    try:
        value = parse_json(body)
    except ValueError as exc:
        assert "not valid JSON" in str(exc)
    else:
        assert nesting(value) <= 1


def test_the_token_bound_without_a_tokenizer_is_never_below_the_count() -> None:
    """The endpoint skips counting tokens when this bound is within its limits."""
    from trainer.args import PACKAGED_MODEL
    from trainer.modeling import load_tokenizer

    tokenizer = load_tokenizer(PACKAGED_MODEL)
    texts = [
        "Order 7 arrived.",
        "naïve café 東京 🙂🙂 ¿¡",
        "a" * 300,
        "x " * 100,
        "\u200b\t\n",
        "é",
    ]
    records = [{"question": q, "context": c} for q in texts for c in texts]
    counts = record_tokens(tokenizer, "extractive-qa", records)
    for record, count in zip(records, counts, strict=True):
        assert 0 <= count <= most_tokens("extractive-qa", record), record
    assert (
        counts[0] == len(tokenizer("Order 7 arrived.", add_special_tokens=False)["input_ids"]) * 2
    )
