"""Street addresses of more of the world: Cyrillic and Greek script, and a flat or unit written
after a European house number.

- Cyrillic (Russian, Ukrainian, Belarusian, Bulgarian, Serbian): a street word, the street's
  name, its number (`ул. Тверская, д. 7, кв. 15`, `вул. Хрещатик, 22`, `улице Ленина 25`), or
  the name first (`Ленинский проспект, 45`); then a building, a block, a flat or an office
  (`корп. 2`, `стр. 1`, `кв. 15`, `оф. 3`) and an optional city and postcode (`Москва,
  125009`);
- Greek: a street word, the name, the number (`Οδός Ερμού 25`, `Λεωφ. Βασιλίσσης Σοφίας 12`),
  or, as Greeks mostly write it, the name and the number before a postcode of 3 + 2 digits
  (`Ερμού 25, 105 63 Αθήνα`), or with neither when the name's last word is in the genitive
  and no month (`Φυλακής 730`, `Πάρ. Σαντομερίου 8`);
- Czech, Norwegian and Finnish streets with no street word: a Czech adjective, possessive or
  genitive, or a preposition and a place, each with a letter of Czech's own (`Rašínská 536`,
  `Kováříkova 4`, `Štychova 39`, `Horní Stromky 56`, `Moravanů 432`, `Na Srážku 19`, `Vlčická
  536/12`), a Norwegian compound ending in a place word's definite form (`Solbergtoppen 8`,
  `Haugestykket 14`), a Finnish compound ending in `tie` (`Jyvätie 15`) (2026-12-01:
  `benchmarks/faker_addresses.py`, Faker's street addresses of 22 locales, left whole 17.0% ->
  6.3% with the other forms of that day; docs/measurements/2026-12-01.md has the false
  findings measured: none new on 13,929 sentences of Greek, Czech, Norwegian and Portuguese
  treebanks);
- after a house number that another form found, a flat or unit word and its number belongs to
  the address (`Hauptstraße 5, Whg. 3`, `ul. Marszałkowska 10/12 m. 5`, `Kungsgatan 12 lgh
  1102`, `Via Roma 10, int. 4`, `Rue Haute 3 bte 2`, `Mariahilfer Straße 1 Top 5`, Romania's
  block, staircase and flat: `Nr. 747 Bl. 40 Sc. 30 Ap. 375`), one or several, with the
  postcode and city after them.

Every form needs a number and a street word, a postcode, or a name only a street takes.
"""

# ruff: noqa: RUF001 (Cyrillic, Greek and Czech letters on purpose: street words of those scripts)
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
    r"пр-д|проезд[аеу]?|туп\.|тупик[аеу]?|ал\.|алл\.|алле[яи]|алея|вул\.|вулиц[яіею]|пров\.|"
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
_GR_TYPES = r"οδός|οδ\.|λεωφόρος|λεωφ\.|λ\.|πλατεία|πλ\.|πάροδος|παρ\.|πάρ\.|αγίου|αγ\."
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
# The end of a house number with no street word before it: no word, percentage or decimal goes
# on (`25%`, `2,5`); and a house number that is no year (`Holmenkollen 2024`).
_HOUSE_END = r"(?![\w%]|[.,]\d)"
_NO_YEAR = r"(?!(?:19|20)\d\d(?!\d))"

# No street word and no postcode, as a Greek writes a street (`Φυλακής 730`, `Ερμού 25`): a
# name whose last word is in the genitive, and its number; not a month (`Ιουλίου 25`), nor a
# number of something after it (`25%`, `2,5`).
_GR_UPPER = _GR_CAP[: _GR_CAP.index("]") + 1]
_GR_MONTHS = (
    "Ιανουαρίου|Φεβρουαρίου|Μαρτίου|Απριλίου|Μαΐου|Μαίου|Ιουνίου|Ιουλίου|Αυγούστου|"
    "Σεπτεμβρίου|Οκτωβρίου|Νοεμβρίου|Δεκεμβρίου"
)
_GR_GENITIVE = (
    rf"(?!(?:{_GR_MONTHS})(?![\u0370-\u03ff]))"
    rf"{_GR_UPPER}[\u0370-\u03ff\u1f00-\u1fff]*(?:ου|ού|ης|ής|ας|άς|ων|ών|εως)"
    rf"(?![\u0370-\u03ff\u1f00-\u1fff])"
)
GREEK_GENITIVE = re.compile(
    rf"(?<![\w\-.])(?P<street>(?:{_GR_CAP}\s+){{0,2}}{_GR_GENITIVE}\s+{_GR_NUMBER})"
    rf"(?P<tail>){_HOUSE_END}"
)
GREEK_HINT = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]")

# --- Czech, Norwegian and Finnish streets with no street word ---------------------------------
# Czech names a street by an adjective, a possessive or a genitive (`Rašínská 536`, `Národní 5`,
# `Kováříkova 4`, `Palackého 12`, `Moravanů 432`) or a preposition and a place (`Na Srážku 19`,
# `Pod Velkým Hájem 19`), with an orientation number after a slash (`Vlčická 536/12`); each
# form holds a letter only Czech and its neighbours write (`á í é ů ě ř š č ž`...), so English
# words do not take it.
_CS_UPPER = "A-ZÁČĎÉĚÍŇÓŘŠŤÚŮÝŽ"
_CS_LETTERS = "a-záčďéěíňóřšťúůýž"
_CS_MARKED = (
    rf"(?=[{_CS_LETTERS}{_CS_UPPER}]*[ÁČĎÉĚÍŇÓŘŠŤÚŮÝŽáčďéěíňóřšťúůýž])[{_CS_UPPER}][{_CS_LETTERS}]+"
)
_CS_WORD = rf"[{_CS_UPPER}][{_CS_LETTERS}]+"
_NOT_A_HOUSE = rf"{_HOUSE_END}(?!\s*(?:%|Kč|let|km|kg|procent))"
CZECH = re.compile(
    rf"(?<![\w\-.])(?P<street>(?:(?:Na|Nad|Pod|U|K|Ke|Za|Před|Při|Ve|Do|Mezi|Proti)\s+"
    rf"(?:{_CS_WORD}\s+){{0,2}}{_CS_MARKED}|(?:{_CS_WORD}\s+)?[{_CS_UPPER}][{_CS_LETTERS}]*"
    rf"(?:ská|cká|ské|cké|ní|ů|ého)|{_CS_MARKED}(?<=ova)|[{_CS_UPPER}][{_CS_LETTERS}]*"
    rf"(?:ní|ká|ké|é)\s+{_CS_WORD})"
    rf"\s+\d{{1,4}}(?:/\d{{1,4}})?[a-z]?)(?P<tail>){_NOT_A_HOUSE}"
)
CZECH_HINT = re.compile(r"[ÁČĎÉĚÍŇÓŘŠŤÚŮÝŽáčďéěíňóřšťúůýž]")
# Norwegian joins a place word in its definite form to the name (`Solbergtoppen 8`,
# `Haugestykket 14`, `Moenvollen 4`: the top, the plot, the field; `Andersenflata 8`,
# `Jensenekra 6`: the flat, the field, feminine); the endings English or German words share are
# left out (`-lia`: Australia, `-hagen`: Copenhagen, `-moen`, `-ringen`: Thüringen).
_NO_ENDINGS = (
    "bakken|berget|bråten|eggen|engen|faret|gjerdet|grenda|haugen|holtet|jordet|kollen|"
    "kroken|lunden|lyngen|løkka|myra|skogen|skrenten|spranget|stubben|stykket|tjernet|"
    "toppen|tunet|vollen|åsen|"
    "ekra|flata|gropa|havna|høgda|marka|stranda|svingen|vangen|vika"
)
NORWEGIAN = re.compile(
    rf"(?<![\w\-.])(?P<street>[A-ZÆØÅ][a-zæøåé]{{2,}}(?:{_NO_ENDINGS})\s+"
    rf"{_NO_YEAR}\d{{1,4}}[A-Za-z]?)(?P<tail>,?\s*(?:\d{{4}}\s+[A-ZÆØÅ][a-zæøå]+)?){_HOUSE_END}"
)
# Finnish joins `tie` (road) to the name (`Jyvätie 15`, `Hannukselantie 56`): after a vowel or
# an `n`, in a word of seven letters or more with no letter thrice in a row (not `Bertie`,
# `Christie`, `necktie`, a tweet's `Kaaaatie`).
FINNISH = re.compile(
    r"(?<![\w\-.])(?![\wäöå]*?([a-zäöå])\1\1)(?P<street>[A-ZÄÖÅ][a-zäöå]{2,}[aeiouyäön]tie\s+"
    rf"{_NO_YEAR}\d{{1,4}}[A-Za-z]?)(?P<tail>){_HOUSE_END}"
)

SCRIPT_FORMS = (
    (CYRILLIC, CYRILLIC_HINT),
    (CYRILLIC_NAME_FIRST, CYRILLIC_HINT),
    (GREEK, GREEK_HINT),
    (GREEK_POSTCODE, GREEK_HINT),
    (GREEK_GENITIVE, GREEK_HINT),
    (CZECH, CZECH_HINT),
    (NORWEGIAN, re.compile(r"\d")),
    (FINNISH, re.compile(r"tie\s")),
)

# --- A flat or unit after a European house number --------------------------------------------
_UNIT_WORDS = (
    r"m\.|lok\.|lgh\.?|lägenhet|int\.|interno|whg\.|wohnung|stiege|stg\.|tür|app\.|appt\.|"
    r"apt\.?|apartment|flat|bus|bte|boîte|esc\.|escalera|piso|puerta|dpto\.?|depto\.?|"
    r"departamento|andar|sala|kv\.|кв\.|door|suite|ste\.?|bl\.|sc\.|ap\.|et\."
)
UNIT_AFTER = re.compile(
    rf"(?:,?[ \t]+(?:(?i:{_UNIT_WORDS})|Top)[ \t]*\d{{1,5}}[a-zA-Z]?"
    rf"(?:[ \t]?[/\-][ \t]?\d{{1,4}})?(?!\w))+"
    rf"(?:{SEP}{EU_POSTCODE}(?:\s*\n\s*|,?\s+){_CITY_EU})?"
)


def unit_after(text: str, end: int) -> int:
    """The end of a flat or unit (and a postcode and city after it) right after `end`, or
    `end` when none follows."""
    unit = UNIT_AFTER.match(text, end)
    return unit.end() if unit else end
