"""IMEIs (a finder added as one module and one row of the table of finders): redacted by the
default screen next to the word IMEI, whole or grouped; a 15-digit order number, a wrong check
digit and a number glued to more digits left as written."""

from __future__ import annotations

import pytest

from screening.config import ScreenConfig
from screening.entities import PII_ENTITIES
from screening.finders.cards import luhn_valid
from screening.finders.imeis import find_imeis
from screening.scan import screen_records
from screening.surrogates import Surrogates

# IMEIs with valid check digits (the first is 3GPP's and Wikipedia's worked example)
IMEIS = ["490154203237518", "35-209900-176148-1", "86 012345 678901 4", "352099001761481"]


def test_an_imei_next_to_its_word_is_redacted_and_an_order_number_is_not() -> None:
    carrier = "My phone was stolen, its IMEI is {v}. Please block it."
    records = [
        {
            "id": str(i),
            "question": carrier.format(v=v),
            "context": "Blocking a phone.",
            "answers": {"text": ["phone"], "answer_start": [0]},
        }
        for i, v in enumerate(IMEIS)
    ]
    order = "Order 352099001761481 shipped on Monday."
    records.append(
        {
            "id": "order",
            "question": order,
            "context": "Orders ship weekly.",
            "answers": {"text": ["weekly"], "answer_start": [12]},
        }
    )
    screening = screen_records("extractive-qa", records, ScreenConfig())
    kept = {r["id"]: r for r in screening.kept}
    for i, value in enumerate(IMEIS):
        assert kept[str(i)]["question"] == carrier.format(v="<IMEI>"), value
    assert kept["order"]["question"] == order  # no IMEI word nearby: a number, left whole


@pytest.mark.parametrize(
    "text",
    [
        "IMEI 490154203237519",  # a wrong check digit
        "IMEI 1490154203237518",  # 16 digits: part of a longer number
        "IMEI 23-209900-176148-3",  # no reporting body allocates 23
        "IMEI 35-209900 176148-1",  # separators of two kinds
    ],
)
def test_what_is_no_imei(text: str) -> None:
    assert find_imeis(text) == []


def test_the_row_makes_it_a_type_rules_name_with_a_valid_surrogate() -> None:
    assert "IMEI" in PII_ENTITIES
    fake = Surrogates(b"0123456789abcdef")("IMEI", "35-209900-176148-1")
    assert fake != "35-209900-176148-1" and fake[2] == "-" and len(fake) == 18
    assert luhn_valid(fake.replace("-", ""))
