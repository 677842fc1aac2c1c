"""Issue 45, item 2: street addresses of more of the world (screening/finders/address_scripts.py):
Cyrillic and Greek script, US military addresses, a flat or unit after a European number, Czech,
Norwegian and Finnish street names with no street word, Romanian `Nr.` and blocks."""

# ruff: noqa: RUF001 (Cyrillic, Greek and Czech letters on purpose: street words of those scripts)
from __future__ import annotations

import pytest

from screening.config import ScreenConfig
from screening.finders.addresses import find_addresses
from screening.scan import screen_records


def _found(text: str) -> list[str]:
    return [text[s.start : s.end] for s in find_addresses(text) if s.score >= 0.5]


@pytest.mark.parametrize(
    ("text", "address"),
    [
        (
            "Мой адрес: ул. Тверская, д. 7, кв. 15, Москва, 125009",
            "ул. Тверская, д. 7, кв. 15, Москва, 125009",
        ),
        ("Живу на улице Ленина 25, кв. 3", "улице Ленина 25, кв. 3"),
        ("Пишите: ул. 8 Марта, 12", "ул. 8 Марта, 12"),
        ("вул. Хрещатик, 22, Київ, 01001", "вул. Хрещатик, 22, Київ, 01001"),
        ("Офис: Ленинский проспект, 45, корп. 2", "Ленинский проспект, 45, корп. 2"),
        ("Η διεύθυνσή μου είναι Οδός Ερμού 25, Αθήνα 105 63", "Οδός Ερμού 25, Αθήνα 105 63"),
        (
            "Λεωφόρος Βασιλίσσης Σοφίας 12, 106 74 Αθήνα",
            "Λεωφόρος Βασιλίσσης Σοφίας 12, 106 74 Αθήνα",
        ),
        ("Στείλτε το στο Ερμού 25, 105 63 Αθήνα", "Ερμού 25, 105 63 Αθήνα"),
        ("PSC 1234, Box 12345, APO AE 09204", "PSC 1234, Box 12345, APO AE 09204"),
        ("CMR 480 Box 1234\nAPO AE 09128-1234", "CMR 480 Box 1234\nAPO AE 09128-1234"),
        ("Hauptstraße 5, Whg. 3, 10115 Berlin", "Hauptstraße 5, Whg. 3, 10115 Berlin"),
        (
            "ul. Marszałkowska 10/12 m. 5, 00-590 Warszawa",
            "ul. Marszałkowska 10/12 m. 5, 00-590 Warszawa",
        ),
        ("Kungsgatan 12 lgh 1102, 111 35 Stockholm", "Kungsgatan 12 lgh 1102, 111 35 Stockholm"),
        ("Via Roma 10, int. 4, 00184 Roma", "Via Roma 10, int. 4, 00184 Roma"),
        # no street word and no postcode: a Greek genitive, Czech and Norwegian street names
        ("Στείλτε το στο Φυλακής 730 ως την Παρασκευή.", "Φυλακής 730"),
        ("Στοιχεία: Πάρ. Σαντομερίου 8", "Πάρ. Σαντομερίου 8"),
        ("Bydlím v ulici Rašínská 536/12 od loňska.", "Rašínská 536/12"),
        ("Kind regards,\nTom Baker\nNa Srážku 19", "Na Srážku 19"),
        ("Details: Kováříkova 4", "Kováříkova 4"),
        ("Please send it to Moravanů 432 by Friday.", "Moravanů 432"),
        ("I moved to Solbergtoppen 8 last year.", "Solbergtoppen 8"),
        ("Haugestykket 14, 4056 Johanfoss", "Haugestykket 14, 4056 Johanfoss"),
        ("Please note Andersenflata 8 for later.", "Andersenflata 8"),  # feminine endings
        ("Jensenekra 6, 6637 Lien", "Jensenekra 6, 6637 Lien"),
        ("Sarah wrote Catharinaboulevard 30 on the form.", "Catharinaboulevard 30"),  # Dutch
        ("Sarah wrote Štychova 39 on the form.", "Štychova 39"),
        ("Details: Horní Stromky 56", "Horní Stromky 56"),
        ("If anything comes up, Jyvätie 15 is best.", "Jyvätie 15"),
        # Romanian: `Nr.` before the number, a block, a staircase and a flat after it
        (
            "Adresa: Strada Maria Suciu Nr. 747 Bl. 40 Sc. 30 Ap. 375",
            "Strada Maria Suciu Nr. 747 Bl. 40 Sc. 30 Ap. 375",
        ),
        ("Please send it to Drumul Ardelean Nr. 99 by Friday.", "Drumul Ardelean Nr. 99"),
        ("Доставка: алл. Курортная, д. 5/1", "алл. Курортная, д. 5/1"),
        # a UK flat's line and its street on the next, nothing after them
        ("Kind regards,\nTom Baker\nFlat 3\nMason Motorway", "Flat 3\nMason Motorway"),
        # Australia's road types (AS/NZS 4819's, as Faker's en_AU writes them)
        ("Please send it to 5 Marine Esplanade by Friday.", "5 Marine Esplanade"),
        ("Details: 32 Patricia Circuit", "32 Patricia Circuit"),
        # Brazil's kinds of place before a street's name
        ("Moro na Ladeira da Barra, 120 desde 2019.", "Ladeira da Barra, 120"),
        ("Entrega: Conjunto Habitacional Vila Rica, 45", "Conjunto Habitacional Vila Rica, 45"),
    ],
)
def test_an_address_of_another_script_or_with_its_flat_is_found_whole(
    text: str, address: str
) -> None:
    assert address in _found(text), find_addresses(text)


@pytest.mark.parametrize(
    "text",
    [
        "В 2020 году на улице было 25 человек.",  # a street word and numbers, no address
        "Занимает площадь 22,56 км2.",  # `площадь`: a square, and an area
        "Глава 5, страница 12.",
        "Ο Οδυσσέας είχε 12 συντρόφους.",
        "Στις 25 Μαρτίου 1821 ξεκίνησε η Επανάσταση.",
        "Ομήρου Οδύσσεια 12, 345 στίχοι",
        "Hauptstraße 5 top 10 reasons",  # `Top 5` is Austrian for a flat, `top 10` is not
        "Η συνάντηση ορίστηκε για τις 12 Ιουλίου 25 συμμετέχοντες.",  # a month's genitive
        "Το μερίδιο της Ελλάδας 25% αυξήθηκε.",  # a share
        "Podle zákona č. 563/1991 Sb. a Národní 5 let trvající program.",  # years of something
        "Copenhagen 2024 and Australia 5 were the names.",  # English words ending so
        "Thüringen 3 : 1 Sachsen",  # `-ringen` is German too: left out
        "We visited Holmenkollen 2024 in winter.",  # a year
        "Bertie 5 and Christie 2 won; tie 3 each.",  # names ending in `tie`, a tie
        "Looooottie 3 ever!",  # a name drawn out
        "Beethoven's Symphonie Nr. 5 in c-Moll",  # a work's number
        "O Conjunto 5 venceu o festival; o Setor 3 fechou.",  # a set, a sector
        "Unit 3\nIntegration Test Point",  # a test's unit, no flat
        "The race at Round 5 Silverstone Circuit was wet.",  # a count before the number
    ],
)
def test_prose_in_those_scripts_is_no_address(text: str) -> None:
    found = _found(text)
    assert found in ([], ["Hauptstraße 5"]), found


def test_the_default_screen_redacts_a_cyrillic_and_a_greek_address() -> None:
    texts = ["Доставка: ул. Тверская, д. 7, кв. 15, Москва", "Οδός Ερμού 25, Αθήνα 105 63"]
    records = [{"id": str(i), "document": t, "summary": "x"} for i, t in enumerate(texts)]
    kept = [r["document"] for r in screen_records("summarization", records, ScreenConfig()).kept]
    assert len(kept) == 2
    assert "Тверская" not in kept[0] and "Ερμού" not in kept[1], kept
