"""`screen.profile=literary` on public-domain prose (Butler's Odyssey, books IX-XII and XXI-XXII,
with e-mails, phones and credentials planted; benchmarks/literary.py): the names of characters and
places kept, an epic's battles kept, every planted value removed; the default profile, on a slice,
takes most of the names out."""

from __future__ import annotations

import pytest

from benchmarks.literary import Measured, load, measure
from screening.config import ScreenConfig


@pytest.fixture(scope="module")
def literary() -> Measured:
    return measure(load(), ScreenConfig(profile="literary"))


def test_the_corpus_is_a_few_hundred_passages_with_values_planted() -> None:
    rows = load()
    planted = [p["type"] for r in rows for p in r["planted"]]
    assert 250 <= len(rows) <= 400
    assert {"EMAIL_ADDRESS", "PHONE_NUMBER", "CREDENTIAL"} == set(planted)
    assert min(planted.count(t) for t in set(planted)) >= 10


def test_literary_keeps_the_names_and_the_passages(literary: Measured) -> None:
    assert literary.names >= 500
    assert literary.names_kept >= 0.95 * literary.names
    assert literary.kept >= 0.90 * literary.records


def test_literary_removes_every_planted_value(literary: Measured) -> None:
    assert literary.planted >= 50 and literary.planted_left == []


def test_the_default_profile_takes_the_names_out() -> None:
    personal = measure(load(30), ScreenConfig())
    assert personal.names >= 30 and personal.names_kept < 0.5 * personal.names
    assert personal.planted_left == []
