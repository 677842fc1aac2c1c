"""What the screen changed in kept records, as the review shows it: each replaced value before (as
a reviewer may see it) and after (as training gets it), a sample per entity type, and flagged
values shown as training keeps them."""

from __future__ import annotations

from screening.changes import TextChange, shown_text, text_changes
from screening.config import Action, EntityRule, ScreenConfig
from screening.policy import apply_policy
from screening.redact import Span, placeholder
from screening.scan import sample_changes

TEXT = "My laptop Pro 14 broke in the Porto store; Ana Lima from support called."


def _span(text: str, value: str, entity: str) -> Span:
    start = text.index(value)
    return Span(start, start + len(value), entity, 0.9)


def test_a_product_read_as_a_person_shows_before_and_after() -> None:
    spans = [_span(TEXT, "Pro", "PERSON"), _span(TEXT, "Ana Lima", "PERSON")]
    changes = text_changes(
        "r1", "text", TEXT, spans, lambda s, v: placeholder(s.entity), {}, {"PERSON"}
    )
    assert [(c.before.value, c.after.value, c.action) for c in changes] == [
        ("Pro", "<PERSON>", "redact"),
        ("Ana Lima", "<PERSON>", "redact"),
    ]
    first = changes[0]
    assert first.before.left.endswith("My laptop ") and first.before.right.startswith(" 14 broke")
    assert first.after.left == "My laptop " and first.after.right.startswith(" 14 broke")
    # the other change in the window shows as the reviewer may see it: here, shown
    assert "Ana Lima" in first.before.right and "<PERSON>" in first.after.right


def test_a_type_the_policy_masks_for_reviewers_shows_its_placeholder_before() -> None:
    email = "Write to ana@example.com for help."
    spans = [_span(email, "ana@example.com", "EMAIL_ADDRESS")]
    surrogate = text_changes(
        "r2",
        "text",
        email,
        spans,
        lambda s, v: "bo@example.org",
        {"EMAIL_ADDRESS": "surrogate"},
        {"PERSON"},
    )
    assert [(c.before.value, c.after.value, c.action) for c in surrogate] == [
        ("<EMAIL_ADDRESS>", "bo@example.org", "surrogate")  # training gets the surrogate
    ]
    assert "ana@example.com" not in surrogate[0].model_dump_json()


def test_a_shown_type_inside_a_masked_one_does_not_show_it() -> None:
    text = "Mail dana.silva@example.com today."
    email = _span(text, "dana.silva@example.com", "EMAIL_ADDRESS")
    name = Span(email.start, email.start + 10, "PERSON", 0.99)  # stronger: names the merge
    [change] = text_changes(
        "r3", "text", text, [email, name], lambda s, v: placeholder(s.entity), {}, {"PERSON"}
    )
    assert change.before.value == "<PERSON>" and "dana" not in change.model_dump_json()


def test_a_flagged_value_is_shown_as_training_keeps_it() -> None:
    shown, marks = shown_text(
        "text",
        TEXT,
        [_span(TEXT, "Ana Lima", "PERSON")],
        [_span(TEXT, "Porto", "LOCATION"), _span(TEXT, "Lima", "LOCATION")],
    )
    assert shown == "My laptop Pro 14 broke in the Porto store; <PERSON> from support called."
    porto, lima = marks
    assert (porto.entity, porto.excerpt.value, porto.replaced) == ("LOCATION", "Porto", False)
    assert porto.excerpt.left.endswith("in the ") and porto.excerpt.right.startswith(" store")
    # a flagged value inside another finding's placeholder: training has not got it, and says so
    assert (lima.excerpt.value, lima.replaced) == ("<PERSON>", True)


def test_the_policy_records_changes_of_kept_records_only() -> None:
    config = ScreenConfig(person_model=False)
    record = {"id": "r1", "text": TEXT}
    findings = {"text": [_span(TEXT, "Pro", "PERSON"), _span(TEXT, "Porto", "LOCATION")]}
    outcome = apply_policy("text-generation", record, findings, 0.0, config)
    assert outcome.reason is None and outcome.flagged == ["LOCATION"]
    assert [(c.field, c.entity, c.before.value, c.after.value) for c in outcome.changes] == [
        ("text", "PERSON", "Pro", "<PERSON>")
    ]
    assert outcome.shown["text"].startswith("My laptop <PERSON> 14 broke in the Porto store")
    assert outcome.masked["text"].startswith("My laptop <PERSON> 14 broke in the <LOCATION>")
    # nothing shown raw when the policy shows no type to reviewers
    hidden = apply_policy(
        "text-generation", record, findings, 0.0, config.model_copy(update={"review_shows": []})
    )
    assert hidden.changes[0].before.value == "<PERSON>"
    # a quarantined record changes nothing in training
    dropped = apply_policy(
        "text-generation",
        record,
        {"text": [*findings["text"], _span(TEXT, "Ana Lima", "US_SSN")]},
        0.0,
        ScreenConfig(
            person_model=False,
            entities={**config.entities, "US_SSN": EntityRule(action=Action.drop)},
        ),
    )
    assert dropped.reason is not None and dropped.changes == [] and dropped.shown == {}


def test_a_qa_answer_change_is_its_context_change() -> None:
    context = "Ana Lima opened the Lisbon office."
    record = {
        "id": "q1",
        "question": "Who opened it?",
        "context": context,
        "answers": {"text": ["Ana Lima"], "answer_start": [0]},
    }
    findings = {
        "question": [],
        "context": [],
        "answers.text[0]": [Span(0, 8, "PERSON", 0.9)],
    }
    outcome = apply_policy("extractive-qa", record, findings, 0.0, ScreenConfig(person_model=False))
    assert [(c.field, c.before.value, c.after.value) for c in outcome.changes] == [
        ("context", "Ana Lima", "<PERSON>")
    ]
    assert outcome.record["context"] == "<PERSON> opened the Lisbon office."


def _change(record_id: str, entity: str) -> TextChange:
    excerpt = {"left": "", "value": "x", "right": ""}
    return TextChange(
        id=record_id, field="text", entity=entity, action="redact", before=excerpt, after=excerpt
    )


def test_a_sample_per_entity_type_spreads_over_records() -> None:
    many = [_change("a", "PERSON") for _ in range(6)]
    changes = [*many, _change("b", "PERSON"), _change("c", "PERSON"), _change("a", "LOCATION")]
    sample = sample_changes(changes, 3)
    persons = [c.id for c in sample if c.entity == "PERSON"]
    assert persons == ["a", "b", "c"]  # one record's six changes do not crowd out the others
    assert [c.id for c in sample if c.entity == "LOCATION"] == ["a"]
    assert len(sample_changes([_change(str(i), "DATE_TIME") for i in range(9)], 3)) == 3
    # kept in the order given (records in the order the screen met them)
    assert sample_changes(changes, 9) == changes
