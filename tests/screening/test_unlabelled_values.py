"""Issue 45, item 1: values with no word before them that says what they are.

Phone numbers written as their own country writes them, in a signature, a form's field or a
list, with no phone word; IBANs in lower case or grouped otherwise than in fours; a random key
under a key name that says nothing. And beside each, the ordinary numbers and `key=value` code
that must stay.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.corpora.measure import HERE, load
from screening.config import ScreenConfig
from screening.finders.credentials import find_credentials
from screening.finders.ibans import find_ibans
from screening.finders.phones import find_phones
from screening.scan import screen_records

PHONE_MIN = 0.4  # the phone rule's least score (screening.finder_table)


def _phones(text: str) -> list[str]:
    return [text[s.start : s.end] for s in find_phones(text) if s.score >= PHONE_MIN]


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("Best regards,\nJan Novák\n601 123 456", "601 123 456"),  # Czech, three-three-three
        ("Jan Novák, 601 123 456, jan@example.cz", "601 123 456"),  # a line of a form
        ("Kontakt: 06-12-34-56-78", "06-12-34-56-78"),  # French pairs joined by hyphens
        ("Terveisin,\nAnna Virtanen\n0401234567", "0401234567"),  # a trunk 0, not grouped
        ("Olá, sou a Ana: 912 345 678", "912 345 678"),  # Portuguese mobile after a label
        ("Details: 9123 4567, weekdays only", "9123 4567"),  # Hong Kong, four-four
        ("Tel: +44 (0)20 7946 0958 x123", "+44 (0)20 7946 0958 x123"),  # trunk, extension
        ("Phone: 555-0100 ext. 42.", "555-0100 ext. 42"),
        # a Kenyan mobile with its country code and no `+`, in a sentence
        ("If plans change, 254712345678 is the one to ring.", "254712345678"),
        # `+` and a country code, in an eight-digit plan libphonenumber no longer takes (Benin's
        # before 2024): as E.164 writes a phone
        ("Until Friday I am at +22990123456, then back home.", "+22990123456"),
        # shapes only phones take, with digits no numbering plan has (a generator's), and an
        # extension written on to the number
        ("Sarah wrote 387.978.9328x792 on the form.", "387.978.9328x792"),
        ("Details: +1-647-201-7468x1453", "+1-647-201-7468x1453"),
        ("If anything comes up, 1 (169) 777-8188 is best.", "1 (169) 777-8188"),
        ("Kind regards,\nTom Baker\n8 (877) 893-28-79", "8 (877) 893-28-79"),
        # the country code in parentheses
        ("Please note (+358) 40 1234567 for later.", "(+358) 40 1234567"),
        # a trunk 8 (Russia), an area code before a slash (Hungary), Brazil's area code
        ("Please note 8 916 123 45 67 for later.", "8 916 123 45 67"),
        ("Kind regards,\nKovács Anna\n30/123-4567", "30/123-4567"),
        ("Sarah wrote 11 91234-5678 on the form.", "11 91234-5678"),
        # a local number with no area code, national mobiles in one run or in threes
        ("If anything comes up, 346-7351 is best.", "346-7351"),
        ("Anna wrote 13812345678 on the form.", "13812345678"),
        ("If plans change, 9812345678 is the one.", "9812345678"),
        ("Please note 601 809 679 for later.", "601 809 679"),
        # when to call written after it, or alone on a signature's line: the text says it is a
        # contact detail, whatever the digits' shape
        ("Front desk, 99000000, Mon-Fri", "99000000"),
        ("If anything changes, 77675798 works until Friday.", "77675798"),
        ("Ring-free hours: 21234567 (9am-5pm)", "21234567"),
        ("Mit freundlichen Grüßen\nAnna Schmidt\nEmpfang\n408500", "408500"),
        ("Best regards,\nThe front desk\n912220000", "912220000"),
        # the closings of other languages the person rules know (`name_words.SIGN_OFFS_ABROAD`)
        ("Terveisin\nAino Korhonen\n408500", "408500"),
        ("Liebe Grüße\nAnna\n408500", "408500"),
        ("Empfang 30123456, Mo-Fr 8-17 Uhr", "30123456"),  # German, French: the days
        ("Accueil 612345678, du lundi au vendredi", "612345678"),
        # Jamaica's number with its area code for a country code, North America's `1` left out
        ("Front desk, +8764511274", "+8764511274"),
        # more digits than E.164 allows: a trunk prefix run on (San Marino's 0549 after +378)
        ("Until Friday I am at +37805496123456789, then back home.", "+37805496123456789"),
    ],
)
def test_a_phone_written_as_its_country_writes_it_is_found_with_no_phone_word(
    text: str, number: str
) -> None:
    assert number in _phones(text), find_phones(text)


@pytest.mark.parametrize(
    "text",
    [
        "The population is 612 345 678 people.",  # thousands in prose
        "Total: 12345678, paid in full",  # a quantity after its label
        "Card: 5732 6853 0009",  # a card's groups of four
        "25050 ALESSANDRO BLVD, MORENO VALLEY, CA, 92553-4313",  # ZIP+4
        "Sao Paulo - SP, CEP 01037-010",  # a Brazilian postcode
        "See http://physics.stackexchange.com/q/5326/56299 for more.",  # a URL's ids
        "Design a method that sums the even terms up to a limit.\n4000000",  # a round number
        "Row: 6 7 2 9 3 4 8 5 1",  # single digits of a puzzle
        "tested 8 - 11 - 2016 and 2016 11 08",  # dates
        "Version 3.0.1 (2022-10-18)",  # a release date in parentheses
        "EE38 2200 2210  014 5686",  # the rest of a run of numbers
        "We trained on 17500000000 tokens.",  # a round count of 11 digits
        "Order 254712345678 shipped today.",  # a mobile's shape after a reference word
        "See run-254712345678 in the log.",  # inside an identifier
        "The balance moved by +22900000000 points.",  # a `+` and a round number
        "x = 5 +22990123456",  # a sum
        "The balance moved by +37805496123450000 points.",  # 17 digits, a round number
        "Senior engineer at Contoso, 2019-2024",  # a CV's years
        "Education: BSc, 1998 \u2013 2002",
        "Both screens run at 1920x1080 and 3840x2160.",  # sizes, an `x` between numbers
        "Mask the value with 0x7fffffff first.",
        "Revenue (2023) 12-34-56 in thousands",  # a year in parentheses
        "See Phys. Rev. 45 (2019) 123-145 for the proof.",  # a citation: volume, year, pages
        "Season 12 2019-2020 was the longest.",  # a season's years
        "IEEE Std 754-2008 defines binary64.",  # a standard's edition
        "SIAM J. Sci. Comput. 31 (3). pp. 970-989. ISSN 1095-7162",  # pages, an ISSN
        "1090-1092 Berkeley St, Charleston, SC 29410",  # a range of house numbers
        "JANET S SMITH 7710 MAIN AVE LOS ANGELES CA 9151-2100",  # a ZIP code short of a digit
        "Resize the window to 1920 1080 first.",  # round numbers
        "The mask is 1100 1100 in binary.",  # bits
        "expr = 15720318185*2**(S(2)/3) + 1",  # a constant in a formula
        "coefficients = [1., 17643225600., 2.]",  # in a list of floats
        # a weekday after a count, a date and its time, a year and its week
        "We expect 1500000 visitors by Monday.",
        "The shop sold 12345678 on Monday.",
        "Responses include AM/PM, for example 1/16/2020 5:24:12 AM +00:00.",
        "parse('1999 51 Mon', '%Y %W %a')",
        "Thanks,\nJan\n\nOrder: 12345678",  # a reference after a signature
        "Ordine 12345678 dal lunedì",  # one day, not a range: an order from Monday
        "Die Lieferung 12345678 kommt am Montag.",
    ],
)
def test_ordinary_numbers_with_no_phone_word_are_no_phones(text: str) -> None:
    assert not _phones(text), find_phones(text)


def test_lower_case_and_regrouped_ibans_are_found_mixed_case_is_not() -> None:
    text = "pay de89 3704 0044 0532 0130 00 or DE89 37040044 0532013000, not LV80 bANK 0000 4351 9500 1"
    found = [text[s.start : s.end] for s in find_ibans(text)]
    assert found == ["de89 3704 0044 0532 0130 00", "DE89 37040044 0532013000"]


def test_two_ibans_in_a_row_are_both_found() -> None:
    text = "DE89370400440532013000 GB82 WEST 1234 5698 7654 32"
    assert [text[s.start : s.end] for s in find_ibans(text)] == [
        "DE89370400440532013000",
        "GB82 WEST 1234 5698 7654 32",
    ]


KEY = "WyQ/fCcr+dnzvaG33T1ksi73ARZjOyxzkQifoAAf"  # 30 random bytes in base64


@pytest.mark.parametrize(
    "text",
    [
        f"Hi support, my setup has blob={KEY} and it still fails.",
        f"cfg_value: {KEY}",
    ],
)
def test_a_random_key_under_a_neutral_name_is_a_credential(text: str) -> None:
    assert KEY in [text[f.start : f.end] for f in find_credentials(text)]


@pytest.mark.parametrize(
    "text",
    [
        f"commit={KEY}",  # an identifier, by its key's name
        f"https://example.com/landing?gclid={KEY}&x=1",  # a URL's tracking parameter
        "layout=ConstraintLayout_Vertical_2x2Grid99",  # a name of code
        "checksum: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ],
)
def test_key_value_code_that_is_no_secret_stays(text: str) -> None:
    assert not find_credentials(text)


@pytest.mark.slow
def test_the_unlabelled_phone_corpus_in_a_signature_or_a_field_is_redacted() -> None:
    """validator.js's mobile numbers of 149 locales (`phones-unlabelled`, dev half) in its four
    frames with no phone word (a signature, a label, a list, a sentence saying when the number
    works): all but one in a hundred redacted by the default screen."""
    records = load("phones-unlabelled", "dev")[:160]
    rows = [{"id": r["id"], "document": r["text"], "summary": "x"} for r in records]
    kept = {
        r["id"]: r["document"] for r in screen_records("summarization", rows, ScreenConfig()).kept
    }
    left = [r["spans"][0]["value"] for r in records if r["spans"][0]["value"] in kept[r["id"]]]
    assert len(records) == 160 and len({r["text"][:7] for r in records}) == 4
    assert len(left) <= 0.01 * len(records), left


@pytest.mark.parametrize(
    "locales",
    [
        # their own forms: `387.978.9328x792`, `1-121-809-6792`, `(973)700-2458x92152`; 24 of 80
        # were left before 2026-11-30
        ("en_US", "en_CA"),
        # `8 145 061 2310`, `87/789-3287`, `601 809 679`, `18081003390`: 41 of 160 left before
        # 2026-12-01
        ("ru_RU", "hu_HU", "pl_PL", "zh_CN"),
    ],
)
def test_fakers_numbers_are_found_whole_with_no_phone_word(locales: tuple[str, ...]) -> None:
    """Faker's numbers of these countries, their digits random, so that many are invalid to
    libphonenumber: every one found whole in frames with no phone word (a note, a field, a
    sentence, a line alone, a signature)."""
    from benchmarks.faker_phones import found_whole, framed

    cases = [case for locale in locales for case in framed(locale, 40, seed=11)]
    left = [number for text, number in cases if not found_whole(text, number)]
    assert len(cases) == 40 * len(locales) and not left, left


@pytest.mark.slow
def test_a_second_sources_numbers_are_redacted_with_no_phone_word() -> None:
    """AfterShip's `phone` tests' valid numbers (`phones-aftership`, dev half), typed by other
    contributors than validator.js's (`22-6569-8900`, `+852 6569-8900`), in the same four
    frames: every one redacted by the default screen."""
    records = load("phones-aftership", "dev")
    rows = [{"id": r["id"], "document": r["text"], "summary": "x"} for r in records]
    kept = {
        r["id"]: r["document"] for r in screen_records("summarization", rows, ScreenConfig()).kept
    }
    left = [r["spans"][0]["value"] for r in records if r["spans"][0]["value"] in kept[r["id"]]]
    assert len(records) > 50 and len(kept) == len(records) and not left, left


@pytest.mark.parametrize(
    ("name", "least"), [("phones-unlabelled", 1000), ("phones-aftership", 100)]
)
def test_the_unlabelled_phone_corpora_are_others_numbers_in_our_frames(
    name: str, least: int
) -> None:
    lines = (HERE / f"{name}.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) > least and {r["split"] for r in records} == {"dev", "test"}
    for r in records:
        (span,) = r["spans"]
        assert r["text"][span["start"] : span["end"]] == span["value"]
        assert not any(w in r["text"].lower() for w in ("phone", "mobile", "tel", "call"))
