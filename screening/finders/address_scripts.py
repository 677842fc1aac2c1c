"""Street addresses of more of the world: Cyrillic and Greek script, and a flat or unit written
after a European house number.

- Cyrillic (Russian, Ukrainian, Belarusian, Bulgarian, Serbian): a street word, the street's
  name, its number (`ул. Тверская, д. 7, кв. 15`, `вул. Хрещатик, 22`, `улице Ленина 25`), or
  the name first (`Ленинский проспект, 45`); then a building, a block, a flat or an office
  (`корп. 2`, `стр. 1`, `кв. 15`, `оф. 3`) and an optional city and postcode (`Москва,
  125009`);
- Greek: a street word, the name, the number (`Οδός Ερμού 25`, `Λεωφ. Βασιλίσσης Σοφίας 12`),
  or, as Greeks mostly write it, the name and the number before a postcode of 3 + 2 digits
  (`Ερμού 25, 105 63 Αθήνα`);
- after a house number that another form found, a flat or unit word and its number belongs to
  the address (`Hauptstraße 5, Whg. 3`, `ul. Marszałkowska 10/12 m. 5`, `Kungsgatan 12 lgh
  1102`, `Via Roma 10, int. 4`, `Rue Haute 3 bte 2`, `Mariahilfer Straße 1 Top 5`), with the
  postcode and city after it.

Every form needs a number and a street word or a postcode, as the Latin forms do.
"""

# ruff: noqa: RUF001 (Cyrillic and Greek letters on purpose: street words of those scripts)
from __future__ import annotations

import re

from screening.finders.address_grammar import _CITY_EU, EU_POSTCODE, SEP

# --- Cyrillic -------------------------------------------------------------------------------
_CYR_CAP = r"[\u0410-\u042f\u0401\u0404\u0406\u0407\u040e\u0490\u0402-\u040b\u040f][\u0400-\u04ff'\u2019\-]*"
# a name's word, or a number opening a name (`8 Марта`, `1-я Тверская-Ямская`)
_CYR_WORD = rf"(?:{_CYR_CAP}|\d{{1,2}}(?:-?(?:го|я|й|ая|ий))?(?=\s+{_CYR_CAP}))"
_CYR_TYPES = (
    r"ул\.|улиц[аеуыі]|улицей|пр-т|пр-кт|просп\.|проспект[аеу]?|пер\.|переул(?:ок|ке|ка)|"
    r"ш\.|шоссе|б-р|бул\.|бульв\.|бульвар[аеу]?|наб\.|набережн(?:ая|ой|ую)|пл\.|площад[ьи]|"
    r"пр-д|проезд[аеу]?|туп\.|тупик[аеу]?|ал\.|алле[яи]|алея|вул\.|вулиц[яіею]|пров\.|"
    r"провул(?:ок|ку)|майдан[уі]?|шосе|узвіз|ул|бул|пр\."
)
_CYR_NAME_TYPES = (
    r"улица|ул\.|проспект|пр-т|просп\.|переулок|пер\.|шоссе|ш\.|бульвар|б-р|набережная|наб\.|"
    r"проезд|вулиця|вул\.|провулок|пров\."  # not `площадь`: also an area (`площадь 900 км2`)
)
_CYR_NUMBER = (
    r"(?:(?:д\.|дом|буд\.|будинок|б\.|№)\s*)?\d{1,4}(?![.,]\d)(?:\s?[а-яА-Яa-zA-Z](?![\w]))?"
    r"(?:\s?[/\-]\s?\d{1,4}[а-я]?)?"
)
_CYR_UNIT = (
    r"(?:,?\s*(?:корп\.|корпус|к\.|стр\.|строение|кв\.|квартира|оф\.|офис|эт\.|этаж|под\.|"
    r"подъезд|пом\.|помещение|лит\.|литер|секц\.|ап\.)\s*\d{1,4}[а-яА-Я]?)*"
)
_CYR_TAIL = (
    rf"(?:,\s*(?:г\.\s*|гр\.\s*|м\.\s*)?{_CYR_CAP}(?:[ \-]{_CYR_CAP})?)?(?:,?\s*\d{{5,6}}(?!\d))?"
)
CYRILLIC = re.compile(
    rf"(?<![\w\-])(?P<street>(?i:{_CYR_TYPES})\s*{_CYR_WORD}(?:[ \-]{_CYR_WORD}){{0,3}},?\s*"
    rf"{_CYR_NUMBER}{_CYR_UNIT})(?P<tail>{_CYR_TAIL})(?!\w)"
)
CYRILLIC_NAME_FIRST = re.compile(
    rf"(?<![\w\-])(?P<street>{_CYR_WORD}(?:[ \-]{_CYR_WORD}){{0,2}}\s+(?i:{_CYR_NAME_TYPES}),?\s*"
    rf"{_CYR_NUMBER}{_CYR_UNIT})(?P<tail>{_CYR_TAIL})(?!\w)"
)
CYRILLIC_HINT = re.compile(r"[\u0400-\u04ff]")

# --- Greek ----------------------------------------------------------------------------------
_GR_CAP = r"[\u0386\u0388-\u038f\u0391-\u03ab\u1f08-\u1f0f\u1f18-\u1f1d\u1f28-\u1f2f\u1f38-\u1f3f\u1f48-\u1f4d\u1f59-\u1f5f\u1f68-\u1f6f][\u0370-\u03ff\u1f00-\u1fff'\u2019.\-]*"
_GR_TYPES = r"οδός|οδ\.|λεωφόρος|λεωφ\.|λ\.|πλατεία|πλ\.|πάροδος|παρ\.|αγίου|αγ\."
_GR_NUMBER = r"\d{1,4}(?![.,]\d)(?:\s?[α-ωΑ-Ω](?![\w]))?(?:\s?[/\-]\s?\d{1,4})?"
_GR_POSTCODE = r"\d{3}\s?\d{2}(?!\d)"
_GR_TAIL = (
    rf"(?:,?\s*(?:{_GR_POSTCODE}\s+{_GR_CAP}(?:[ \-]{_GR_CAP})?|{_GR_CAP}(?:[ \-]{_GR_CAP})?"
    rf"(?:,?\s*{_GR_POSTCODE})?|{_GR_POSTCODE}))?"
)
GREEK = re.compile(
    rf"(?<![\w\-])(?P<street>(?i:{_GR_TYPES})\s*{_GR_CAP}(?:\s+{_GR_CAP}){{0,3}},?\s*{_GR_NUMBER})"
    rf"(?P<tail>{_GR_TAIL})(?!\w)"
)
# No street word: the name, the number and a postcode (`Ερμού 25, 105 63 Αθήνα`)
GREEK_POSTCODE = re.compile(
    rf"(?<![\w\-])(?P<street>{_GR_CAP}(?:\s+{_GR_CAP}){{0,3}}\s+{_GR_NUMBER})"
    rf"(?P<tail>,?\s*(?:{_GR_POSTCODE}(?:\s+{_GR_CAP}(?:[ \-]{_GR_CAP})?)?|{_GR_CAP}"
    rf"(?:[ \-]{_GR_CAP})?,?\s*{_GR_POSTCODE}))(?!\w)"
)
GREEK_HINT = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]")

SCRIPT_FORMS = (
    (CYRILLIC, CYRILLIC_HINT),
    (CYRILLIC_NAME_FIRST, CYRILLIC_HINT),
    (GREEK, GREEK_HINT),
    (GREEK_POSTCODE, GREEK_HINT),
)

# --- A flat or unit after a European house number --------------------------------------------
_UNIT_WORDS = (
    r"m\.|lok\.|lgh\.?|lägenhet|int\.|interno|whg\.|wohnung|stiege|stg\.|tür|app\.|appt\.|"
    r"apt\.?|apartment|flat|bus|bte|boîte|esc\.|escalera|piso|puerta|dpto\.?|depto\.?|"
    r"departamento|andar|sala|kv\.|кв\.|door|suite|ste\.?"
)
UNIT_AFTER = re.compile(
    rf",?[ \t]+(?:(?i:{_UNIT_WORDS})|Top)[ \t]*\d{{1,5}}[a-zA-Z]?(?:[ \t]?[/\-][ \t]?\d{{1,4}})?(?!\w)"
    rf"(?:{SEP}{EU_POSTCODE}(?:\s*\n\s*|,?\s+){_CITY_EU})?"
)


def unit_after(text: str, end: int) -> int:
    """The end of a flat or unit (and a postcode and city after it) right after `end`, or
    `end` when none follows."""
    unit = UNIT_AFTER.match(text, end)
    return unit.end() if unit else end
