"""Street addresses, phones, cards and IBANs as the world writes them: found and redacted by the
default screen, prose with numbers left alone, address surrogates of the same shape."""

from __future__ import annotations

import re

import pytest

from screening.config import ScreenConfig
from screening.finders.addresses import find_addresses
from screening.finders.cards import find_cards
from screening.finders.ibans import find_ibans
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
        "RR 2 Box 61, Dalton, NE 69131",
    ],
    "PHONE_NUMBER": [
        "451 5986",
        "+447700 208 815",
        "+33 1 42 68 53 00",
        "030 12345678",
        "7290",  # Niue: 4 digits, right after the phone word
        "22 158",  # Saint Helena
        "75.12.34",  # New Caledonia, written like a date
        "8 (771) 000 9998",  # Kazakhstan, whole (not only the part a US/UK matcher takes)
        "+420123456789",  # E.164's shape; libphonenumber calls it impossible
        "4917612345678",  # a German mobile, its country code without `+`: DE's matcher drops it
    ],
    "CREDIT_CARD": [
        "4111 1111 1111 1111 003",  # 19-digit Visa
        "5018 0000 0009",  # 12-digit Maestro
        "213100000000001",  # 15-digit JCB
        "2223-0000-4841-0010",  # Mastercard 2-series
        "8112 3456 7890 1234 569",  # UnionPay's 81 range, 19 digits
    ],
    "IBAN_CODE": [
        "IR66 0570 0220 8000 0000 0010 10",  # Iran, Algeria, El Salvador: not in Presidio's list
        "DZ580002100001113000000570",
        "SV62CENR00000000000000700025",
        "DE89 3704 0044 0532 0130 00",
    ],
}
CARRIERS = {
    "STREET_ADDRESS": "Please send the replacement to {v} before Friday.",
    "PHONE_NUMBER": "Phone: {v} (evenings).",
    "CREDIT_CARD": "The refund goes to my card {v}, thanks.",
    "IBAN_CODE": "Wire it to {v} today.",
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
    # numbers that are not phones, cards or IBANs, a phone word before some
    "Call me on 12.05.2024 after 10:30 or call 2024-06-01 09:00; the fee is $1,234.56.",
    "Phone support (ZIP 90210, PIN 4821): version 10.0.19045.3803, build 20240115, 2023.",
    "The number of users is 13812345678; timestamp 1712345678 and 1712345678123 ms.",
    "Tracking number 1Z999AA10123456784, EAN 4006381333931, ISBN 978-3-16-148410-0.",
    "Invoice no. 4111111111111111 and order 2223000048410010 are paid; total 5,000,000.",
    "Our code DE44 3704 0044 0532 0130 99 and model AB12 CDEF GHIJ KLMN are not accounts.",
    "Malformed, its digits no phone: BA39 A291 2345 6789 0123.",
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
    # rural routes and highway contracts (USPS Publication 28), a unit number ending the line,
    # a unit's "No.", fractions and Wisconsin grid numbers, lower-case streets
    "RR 3 Box 47, Millersburg, OH 44654",
    "HC 5 Box 7",
    "Star Route Box 12",
    "2217 N Halsted Street 3",
    "88 Elm Ave Apt No. 12",
    "714½ Maple Road",
    "W204N11509 Goldendale Rd, Germantown, WI 53022",
    "1840 north damen avenue",
    # Finnish number first, Hungarian, Danish floors, Spanish, Colombian, Brazilian, Mexican
    "12 Aleksanterinkatu",
    "Kossuth Lajos utca 12, 1053 Budapest",
    "Nørregade 7 2. sal",
    "Calle de Alcalá, 42 - 3º",
    "Carrera 7 # 71-21",
    "Praça da Sé, s/n, 01001-000 São Paulo",
    "Insurgentes Sur, 1602, 03940, Benito Juárez",
    # Canada: a province by name or in parentheses (Quebec's own style), French-Canadian units
    # and post-office boxes, ordinal streets, a unit before the house number, numbered avenues
    "3120, rue Sherbrooke Ouest, bureau 210 Montréal (Québec) H3Z 1A4",
    "225, 4e avenue Lévis (Québec) G6V 3C2",
    "90, boul. des Hauteurs C.P. 12, Saint-Jérôme (Québec) Canada, J7Y 1R8",
    "415 Maple Grove Road Kingston, Ontario K7M 4J3",
    "2204-15810 88 Ave Surrey, BC V4N 1J2",
    "310 - 9th Street SE Medicine Hat, AB T1A 1N9",
    # US: a one-letter street, a Utah grid in words, "The" before a street word, a route
    "318 A Street NE, Washington, DC 20002",
    "1480 West 500 North, Logan, UT 84321",
    "4 The Crescent, Harrogate HG1 2RT",
    "17 Elm Road (Route 6)",
    "88 I St NW The Lindley, Apt 4B, Washington, DC 20001",
    # Czech and Slovak house numbers (register/street), a 000 00 postcode
    "Vinohradská 1511/230\n100 00 Praha",
    # Australian units before the house number, Catalan elided particles, Romanian and
    # Portuguese street words, lower-case Portuguese, Norwegian street words written apart,
    # a German house-number range
    "Unit 4/27 Wattle Road, Brookvale NSW 2100",
    "Carrer d'Urgell 201, 08036 Barcelona",
    "Bulevardul Unirii 12, 030833 București",
    "Tv. do Carmo 8B",
    "rua das flores 44",
    "Ole Bulls gate 7",
    "Am Stadtpark 3-5, 20249 Hamburg",
    # messy US lines as forms and billing records hold them: rural routes in lower case, a box
    # alone before its city, state and ZIP, a billing box's mail code, ordinals as typed, a
    # ZIP+4 without its dash, lower-case directions before a unit, units written `# 12-4`,
    # `No 12`, `MSC 4410`, `APT D`, `bldg c`, a number word or a letter after the house number,
    # a numbered place, `&` in a name, lower-case state roads and spurs
    "rr # 2 box 118 a",
    "rr 6, box 57c, athens oh 45701",
    "Box # 17, Ely, NV 89301",
    "dept 4410 po box 2290 dallas tx 75221",
    "msc 7735 po box 41600",
    "P O Box 412-88",
    "2218 12Th Avenue South, Fargo, ND 58103",
    "1502 Birch Ave, Dayton, OH 454021234",
    "415 pine st ne # 208",
    "77 Lakeview Dr # 12-4",
    "4410 Elm Street No 12",
    "1 Campus Drive MSC 4410",
    "3318 MONTEREY APT D",
    "2930 pine ridge rd bldg c # 4",
    "1450 cedar park drive east bldg 2",
    "Seven W. Oak St., Joliet, IL 60432",
    "Nine Harbor Parkway Suite 300",
    "612 B Maple Avenue, Evanston, IL 60201",
    "2212 West 108 Place",
    "88 Birch & Vine Lane, Athens, GA 30601",
    "1800 state road 84 ste 6",
    "9150 Spur 12, Lubbock, TX 79424",
]
# A building's name or a PO box before a British street, first on its line or after a comma.
UK_BUILDINGS = [
    "Riverside House, Bridge Street, Ely CB7 4DA",
    "PO Box 57, Castle Chambers, Market Square, Peel, Isle of Man IM5 1AB",
]
# An address line on a line of its own (a form's or a table's field), with no street word.
ALONE = [
    "7712 greenview",
    "4420 Bryn Mawr",
    "3901 south state 1st floor",
    "415 main fort worth, tx",  # a lower-case city, a comma and a state end the line
    "99-080 Kauhale, Aiea, HI 96701",  # a Hawaiian house number
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
    # a line of its own that is a count, a year and a title, an HTTP status, watts
    "30 minutes",
    "250 followers",
    "1984 Olympic Games",
    "404 Not Found",
    "502 Bad Gateway",
    "429 Too Many Requests",
    "500 Internal Server Error",
    "296 employees",
    "100 W Power Supply",
    "the hc box 5 times",
    # a product line: a quantity, capitals and two last letters that are also a state's
    "450 ROTARY SCREW COMPRESSOR CO",
    "75 STAINLESS HEX BOLTS PA",
    # a title after a number, with "The" or a number before a street word
    "Chapter 3 The Long Road",
    "Version 10 3 Way Switch",
    # a letter after a number, a lower-case route word, a box with a comma after it
    "Chapter 12 A Long Road",
    "we took 2019 business 101 at night",
    "Put it in Box 12, Then close it",
    "Add 5 No 2 pencils to the list",
]


# A street name and a house number with nothing else, by libpostal's street types of other
# languages (screening/data/street_types.tsv); written for this test, in no corpus.
STREET_TYPE_WORDS = [
    "Fiskerplassen 14",  # Norwegian: a compound ending in a street type
    "Nedre Sagveien 7B",  # with a capitalised word before it
    "Kvarnbäcksvägen 31",  # Swedish
    "Ostra Hamnvagen 4",  # as typed, without its ring: -vagen
    "Lindenbaumstraße 112",  # German
    "Brouwersgracht 88",  # Dutch
    "Sønder Boulevarden 9",  # Danish
    "Tērbatas iela 41",  # Latvian: the type after the name, in lower case
    "Vilniaus gatvė 18",  # Lithuanian
    "Narva maantee 25",  # Estonian
    "Karanfil Sokak 12",  # Turkish, the type capitalised
    "Rua Augusta 274",  # Portuguese: the type first
    "náměstí Jiřího 9",  # Czech: a type in lower case before a capitalised name
]
# The same in prose, and product names, titles and counts beside numbers that end in or are
# no street type once English words are left out.
NOT_STREET_TYPE_WORDS = [
    "Jurassic Park 3 was better than Disneyland 2.",
    "Windows Vista 7 never shipped; Erlang 25 did.",
    "I sent it via Slack 3 times.",
    "Watergate 2 and Stargate 1 are films.",
    "Halle 3 is closed, see Golang 2 notes.",
    "We played Borderlands 3 and Fallout 4 all weekend.",
    "the Humboldt-Universität 3 lecture hall",
    "I walk skredderplassen 20 times a day",  # lower case inside a sentence
]


# A street with no street word in any language, a town GeoNames knows after it
# (screening/data/cities.txt.gz), and street types misspelt by hand; written for this test, in
# no corpus.
TOWN_AFTER = [
    "Lípová 312, Brno",  # Czech: a name and a number, the town after a comma
    "Zielona 14, Kraków",  # Polish, no `ul.`
    "Birkenried 8\nGöttingen",  # the town on the next line
    "Rozmarinova 27, 10000 Zagreb",  # a postcode before the town
    "27 Oakfield, Galway",  # Irish: the number first
    "9 The Paddocks, Limerick",
    "1450 ELMWOOD Chicago IL",  # a US line: a known city and a state, no comma or ZIP
]
TYPOS = [
    "4128 Willow Creek Parkwy, Austin, TX 78745",
    "2330 Harbor Boulvard Suite 12",
    "615 maple grove avenu",
    "902 Lakeshore Steet",
]
NOT_TOWN_AFTER = [
    "We played Fallout 4, Boston was the map.",
    "Top 5 Bars, Chicago",
    "Season 3, Paris",
    "Windows 11, Berlin edition",
    "In 2019 Porto, Lisbon and Faro were sunny.",
    "I bought 3 Apples, Oranges and Pears",
    "He scored 12 Points, Madrid won",
    "the 2 Towers, Rome",
    "a list of 10 Cities, London",
]


@pytest.mark.parametrize("value", TOWN_AFTER + TYPOS)
def test_a_street_without_a_street_word_before_a_known_town_or_misspelt_is_found(
    value: str,
) -> None:
    for text in (value, f"Ship to:\n{value}\nThanks"):
        found = [text[s.start : s.end] for s in find_addresses(text) if s.score >= 0.5]
        assert found == [value], (text, found)


def test_a_name_a_number_and_a_town_in_prose_are_left_alone() -> None:
    found = {
        t: [t[s.start : s.end] for s in find_addresses(t) if s.score >= 0.5] for t in NOT_TOWN_AFTER
    }
    assert not any(found.values()), found
    # no town after it: a name and a number alone stay out ("Birkenried 8": no street word)
    assert not [s for s in find_addresses("Birkenried 8") if s.score >= 0.5]


# US routes with no street word after their number and street grids (a direction on both sides
# of the grid's number), as typed in a form; written for this test, in no corpus.
ROUTES_GRIDS = [
    "3170 us 27 lakeland fl",
    "8420 I 35 N",
    "2210 US 64 EAST BYPASS",
    "31800 OLD 76 HWY",
    "4470 Old Number 3 Road, Dunn, NC 28334",
    "782 s 900 w # 14",
    "61 east 1700 north provo ut 84604",
    "27 W 300 South Frontage Rd",
    "62N 500W, Logan UT",
    "245 s 12 Denver",  # one direction: only before a town GeoNames knows ending the line
]
NOT_ROUTES_GRIDS = [
    "I ran 500 us dollars",
    "Page 132 n 10",
    "The score was 21 n 10.",
    "version 2.1 n 3 e",
    "at 10:30 n 5 e",
    "500 US 20 largest companies",
    "2021 US 10 year yields fell",
    "12 N 45 E",  # coordinates
    "Chapter 12 n 100 e",
    "my 25 old 41 roads",
    "150 I 10 minutes",
    "In 2019 I 10x'd my savings",
    "a 48V 16S 2000W battery",
]


@pytest.mark.parametrize("value", ROUTES_GRIDS)
def test_a_route_or_a_grid_without_a_street_word_is_found(value: str) -> None:
    for text in (value, f"Ship to:\n{value}\nThanks"):
        found = [text[s.start : s.end] for s in find_addresses(text) if s.score >= 0.5]
        assert found == [value], (text, found)


def test_routes_and_grids_in_prose_are_left_alone() -> None:
    found = {
        t: [t[s.start : s.end] for s in find_addresses(t) if s.score >= 0.5]
        for t in NOT_ROUTES_GRIDS
    }
    assert not any(found.values()), found


@pytest.mark.parametrize("value", STREET_TYPE_WORDS)
def test_a_street_of_another_language_with_its_number_is_found(value: str) -> None:
    # in a sentence; alone (a query); in lower case on a line of its own (as typed in a form)
    for text, street in ((f"Ship to {value}, thanks", value), (value, value), (value.lower(),) * 2):
        found = [text[s.start : s.end] for s in find_addresses(text) if s.score >= 0.5]
        assert found == [street], (text, found)


def test_a_street_type_of_another_language_in_prose_is_left_alone() -> None:
    found = {
        t: [t[s.start : s.end] for s in find_addresses(t) if s.score >= 0.5]
        for t in NOT_STREET_TYPE_WORDS
    }
    assert not any(found.values()), found


def test_a_lower_case_address_line_takes_its_city() -> None:
    text = "Name: Ann Lee\n4817 maple grove drive ne marietta\nThanks"
    found = [text[s.start : s.end] for s in find_addresses(text) if s.score >= 0.5]
    assert found == ["4817 maple grove drive ne marietta"]
    # a count of things that drive is no street
    assert not [s for s in find_addresses("1200 cars drive past daily") if s.score >= 0.5]


@pytest.mark.parametrize("value", WHOLE)
def test_an_address_is_found_whole_with_its_city_and_postcode(value: str) -> None:
    text = f"Please send it to {value}\nThanks, Ann"
    found = [(text[s.start : s.end], s.score) for s in find_addresses(text) if s.score >= 0.5]
    assert [v for v, _ in found] == [value], found


@pytest.mark.parametrize("value", UK_BUILDINGS)
def test_a_building_before_a_british_street_is_part_of_the_address(value: str) -> None:
    for text in (f"Ship to:\n{value}\nThanks", f"Please write to us, {value}"):
        found = [text[s.start : s.end] for s in find_addresses(text) if s.score >= 0.5]
        assert found == [value], found


@pytest.mark.parametrize("value", ALONE)
def test_an_address_line_of_its_own_is_found(value: str) -> None:
    text = f"Name: Ann Lee\n{value}\nChicago"
    found = [text[s.start : s.end] for s in find_addresses(text) if s.score >= 0.5]
    # a capitalised name takes the town GeoNames knows on the next line with it
    assert found == [f"{value}\nChicago" if value == "4420 Bryn Mawr" else value]
    # the same words inside a sentence are no address
    assert not [s for s in find_addresses(f"We had {value} today.") if s.score >= 0.5]


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


@pytest.mark.slow
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
    assert not found & {"STREET_ADDRESS", "CREDIT_CARD", "PHONE_NUMBER", "IBAN_CODE"}, found


@pytest.mark.parametrize("value", FOUND["CREDIT_CARD"])
def test_a_card_number_one_digit_off_is_not_a_card(value: str) -> None:
    digits = re.sub(r"\D", "", value)
    assert _luhn_ok(digits) and find_cards(value)
    wrong = value[:-1] + str((int(value[-1]) + 1) % 10)
    assert not find_cards(wrong)


def test_every_card_of_a_run_of_numbers_is_found() -> None:
    cards = ["4012888888881881", "4012-8888-8888-1881", "4012 8888 8888 1881"]
    text = " ".join(cards)
    assert [text[s.start : s.end] for s in find_cards(text)] == cards


def test_an_iban_is_found_up_to_its_country_length() -> None:
    text = "Send it to DE89 3704 0044 0532 0130 00 2 days from now, not to GB82 WEST 1234."
    assert [text[s.start : s.end] for s in find_ibans(text)] == ["DE89 3704 0044 0532 0130 00"]


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
