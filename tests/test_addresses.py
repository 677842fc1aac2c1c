"""Street addresses, phones and cards as the world writes them: found and redacted by the default
screen, prose left alone, address surrogates of the same shape."""

from __future__ import annotations

import re

import pytest

from screening.addresses import find_addresses
from screening.cards import find_cards
from screening.policy import ScreenConfig
from screening.scan import screen_records
from screening.surrogates import Surrogates

FOUND = {
    "STREET_ADDRESS": [
        "1600 Pennsylvania Avenue NW\nWashington, DC 20500",
        "221B Baker Street, London NW1 6XE",
        "Flat 3, 12 High St, Oxford OX1 4AA",
        "1777 Kramer Court\nJohnsonfurt, NS T2L 6K1",
        "Hauptstraße 5, 10115 Berlin",
        "12 rue de la Paix, 75002 Paris",
        "Keizersgracht 123, 1015 CJ Amsterdam",
        "Calle Mayor 5, 28013 Madrid",
        "Via Roma, 10\n00184 Roma",
        "P.O. Box 1234, Springfield, IL 62704",
        "0487 Lisa Hollow Suite 775\nNew Eric, NH 57483",
        "120 N. Michigan Ave. Ste 1605",
    ],
    "PHONE_NUMBER": ["451 5986", "+447700 208 815", "+33 1 42 68 53 00", "030 12345678"],
    "CREDIT_CARD": [
        "4111 1111 1111 1111 003",  # 19-digit Visa
        "5018 0000 0009",  # 12-digit Maestro
        "213100000000001",  # 15-digit JCB
        "2223-0000-4841-0010",  # Mastercard 2-series
    ],
}
CARRIERS = {
    "STREET_ADDRESS": "Please send the replacement to {v} before Friday.",
    "PHONE_NUMBER": "Phone: {v} (evenings).",
    "CREDIT_CARD": "The refund goes to my card {v}, thanks.",
}
PROSE = [
    "Here are 5 Main reasons to upgrade, and Room 5 is free on Monday.",
    "Chapter 12 Street Fighter was the best level of the game.",
    "I walked 5 blocks down the road and took 2 wrong turns on the way.",
    "Order 561234567894 shipped on 2024-01-15 at 10:30 from gate 3.",
    "Version 3.12.1 fixed 4 bugs; 1,234,567 downloads in 2023.",
    "Invoice 4111111111111112 is due; our 5 Key Points are below.",
    # a phone word earlier, a reference nearer: an order number, not a phone
    "Please call about order number #2640684 and case id 7719 2040, not before.",
]


# Whole addresses as people write them: the span is the street AND its city, state, postcode
# (a street masked but its city and ZIP kept leaves the address half there).
WHOLE = [
    # US: routes, units, directions, lower case, billing PO boxes, a city and ZIP without a state
    "5801 North Highway 763, Columbia, MO 65202",
    "36401 County Road 43, Eaton, CO 80615",
    "520 Madison Ave., 8th Flr, New York, NY 10022",
    "9837 SW 184TH ST NW Bld A FLR 3 STE 222",
    "1919 n. flager dr. west palm beach fl 33407",
    "po box 790322 bin 150003 st louis mo 63179",
    "340 JAMES W GRAHAM RD MAXTON 28364",
    "110 W Hubbard, Chicago, IL 60654",
    "6641 N 2200 W Apt D304 Park City, UT 84098",
    "2633 Camino Ramon, Suite 500, San Ramon, CA 90120",
    "One Jelly Belly Lane",
    # UK and Canada: a block without a house number, an outward code, a Quebec street
    "Flat 6\nFrederick Highway\nSouth Marianmouth\nL69 1TP",
    "64 Melbourne Road, London, E10",
    "12345 Av Demars, St-Hyancinth, J2T 3T5",
    # EU: street first, the postcode and city on the same line or the next
    "Storgatan 33, 411 34 Gothenburg",
    "ulica Wybickiego 24\n61-071 Środa Wielkopolska",
    "Witthau 3\n89129 Langenau",
    "Glænø Allé 34\n1502 Holstebro",
    "Rue Salmon 67, 1360 Perwez",
    "Indyring 9\n1601 FA\nLettele",
    "Schönauerring 7/5\n2449 Waidhofen an der Ybbs",
]
# Numbers beside capitalised words that are no address (found by no pattern at 0.5 or more).
NOT_ADDRESSES = [
    "100 W Power Supply",
    "60 W LED bulb",
    "1934 North Dakota",
    "3 Mile Island",
    "6 Casual Flat Front",
    "Spring 2024 and Notepad 2",
    "Engineering 101\nMonitoring 2",
    "cron: 0 2 * * MON#5",
    "5 Billboard #1 hits",
    "Windows 10, 2024 Edition is out today",
]


@pytest.mark.parametrize("value", WHOLE)
def test_an_address_is_found_whole_with_its_city_and_postcode(value: str) -> None:
    text = f"Please send it to {value}\nThanks, Ann"
    found = [(text[s.start : s.end], s.score) for s in find_addresses(text) if s.score >= 0.5]
    assert [v for v, _ in found] == [value], found


def test_numbers_in_prose_are_not_addresses() -> None:
    found = {
        t: [t[s.start : s.end] for s in find_addresses(t) if s.score >= 0.5] for t in NOT_ADDRESSES
    }
    assert not any(found.values()), found


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def test_each_format_is_found_and_redacted_by_the_default_screen() -> None:
    records, expected = [], []
    for entity, values in FOUND.items():
        for i, value in enumerate(values):
            text = CARRIERS[entity].format(v=value)
            records.append({"id": f"{entity}-{i}", "document": text, "summary": "A request."})
            expected.append((entity, value))
    screening = screen_records("summarization", records, ScreenConfig())
    assert len(screening.kept) == len(records)
    for record, (entity, value) in zip(screening.kept, expected, strict=True):
        assert value not in record["document"], f"{entity} {value!r} survived"
        assert f"<{entity}>" in record["document"], (entity, record["document"])


def test_prose_with_numbers_is_left_alone() -> None:
    records = [{"id": str(i), "document": t, "summary": "Notes."} for i, t in enumerate(PROSE)]
    screening = screen_records("summarization", records, ScreenConfig())
    assert [r["document"] for r in screening.kept] == PROSE
    found = {c.entity for c in screening.tally.entities}
    assert not found & {"STREET_ADDRESS", "CREDIT_CARD", "PHONE_NUMBER"}, found


@pytest.mark.parametrize("value", FOUND["CREDIT_CARD"])
def test_a_card_number_one_digit_off_is_not_a_card(value: str) -> None:
    digits = re.sub(r"\D", "", value)
    assert _luhn_ok(digits) and find_cards(value)
    wrong = value[:-1] + str((int(value[-1]) + 1) % 10)
    assert not find_cards(wrong)


@pytest.mark.parametrize(
    ("value", "shape"),
    [
        (
            "1600 Pennsylvania Avenue NW\nWashington, DC 20500",
            r"\d+ [^\n]+\n[^\n,]+, [A-Z]{2} \d{5}",
        ),
        ("Hauptstraße 5, 10115 Berlin", r"\D+ \d+\S*, \d{5} .+"),
        ("12 rue de la Paix, 75002 Paris", r"\d+,? .+, \d{5} .+"),
        ("221B Baker Street, London NW1 6XE", r"\d+ .+, .+ [A-Z0-9]{2,4} \d[A-Z]{2}"),
        ("P.O. Box 1234", r"P\.O\. Box \d{4}"),
    ],
)
def test_an_address_surrogate_keeps_its_shape(value: str, shape: str) -> None:
    fake = Surrogates(b"tests-only surrogate salt")("STREET_ADDRESS", value)
    assert fake != value and re.fullmatch(shape, fake), fake
    assert value.count("\n") == fake.count("\n")
