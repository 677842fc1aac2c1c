"""Street addresses: US, UK, Canadian and European formats, on one line or several.

`StreetAddressRecognizer` finds STREET_ADDRESS by anchored patterns (a house number, a street-type word,
a postcode), not by a parser: every pattern needs a house or box number AND a street-type word
(or a P.O. box / military address form), so prose numbers ("5 Main reasons", "Room 5", "Chapter
12 Street Fighter") are not addresses. The forms:

- house number first (US, UK, Canada, Ireland, Australia): `221B Baker Street`, `1600
  Pennsylvania Avenue NW`, `Flat 3, 12 High St`, with units (Apt, Suite, Unit, Floor, #) and an
  optional tail on the same line or the next: `City, ST 12345`, `City, QC H2X 1Y4`, `London NW1
  6XE`. Street types: the common ones (Street, St, Avenue, Road, Lane, Drive, Boulevard...) score
  alone; the rest of Faker's en_US street-suffix list (Key, Light, Point, Union...) only with a
  tail, a unit or an address word before ("address", "live at", "ship to");
- street name first, number after (German, Austrian, Swiss, Dutch, Nordic, Polish):
  `Hauptstraße 5`, `Frankfurter Allee 12a`, `Keizersgracht 123`, `ul. Długa 5`, then an optional
  `10115 Berlin` / `1015 CJ Amsterdam`;
- number then type word then name (French): `12 rue de la Paix`, `5, avenue Samson`, then an
  optional `75002 Paris`;
- type word, name, number (Spanish, Italian, Portuguese): `Calle Mayor 5`, `Via Roma, 10`,
  `Avenida da Liberdade 100`, then an optional postcode and city;
- P.O. boxes (`P.O. Box 123`, `po box 790322 bin 150003`, `Postfach 1234`, `Apartado 45`, `BP
  12`, `Postbus 7`), rural routes and highway contracts (`RR 2 Box 152`, `HC 68 Box 23A`, `Star
  Route Box 12`: USPS Publication 28) and US military addresses (`PSC 1234, Box 5678 APO AA
  12345`);
- Colombian grid addresses (`Cra 18 # 63-64 B`), Hungarian (`Kossuth Lajos utca 12`), Danish
  and Swedish floors after the number (`Nørregade 7 2. sal`, `Storgatan 1, 1 trappa upp`), a
  Finnish or German compound after its number (`1 Hämeenkatu`), Mexican `Insurgentes Sur,
  1602, 03940, Benito Juárez`;
- US forms without a street-type word: routes (`5801 North Highway 763`, `2002 FM 544`, `County
  Road GV`), a direction before the name (`110 W Hubbard`, grid `6641 N 2200 W`), a numbered unit
  after it (`4004 OCEAN FRONT APT 410`), `1111 Broadway`, Spanish names (`2633 Camino Ramon`);
  a UK block ending in its postcode (`Flat 6` / `Frederick Highway` / town / `L69 1TP`); a
  street without a street word before a postcode line that ends it (`Witthau 3` / `89129
  Langenau`);
- house numbers as written: `16½`, `3813 1/2`, `92-10`, grid `N95W18855`; a unit number with no
  unit word ending the street's line (`4208 N Broadway Street 10`), `Apt No. 456`; a lower-case
  street with an unmistakable street word (`1919 west taylor street`, `271 spring st nw`; not
  `road`, `drive`, `way`, `court`: everyday words);
- a line that is only a house number of 3+ digits and one or two words, with its unit and tail
  (`5429 woodlawn chicago`, `3901 south state 1st floor`: a form's or a table's address field);
  not a count (`250 followers`), a year and a title (`1984 Olympic Games`), an HTTP status line
  (`502 Bad Gateway`), watts (`100 W Power Supply`) or a product line whose last two capitals
  look like a city and a state with no ZIP or comma (`130 AUTOMATIC STRAPPING MACHINE CO`);
- Canada and Australia: a province by name or in parentheses, Quebec's way (`Montréal (Québec)
  H2S 3L5 Canada`, `Barrie, Ontario L4N 8G1`), French-Canadian units and boxes (`bureau 1105`,
  `C.P. 500`), ordinal streets (`18e rue`), a unit before the house number (`104-18663 52 AVE`,
  `718 - 8th Avenue SW`, `Unit 12/345 Main St`), numbered avenues without their ordinal (`121a
  Ave NW`), a state and postcode (`Brookvale NSW 2100`);
- more street names: one letter (`1202 A Avenue`, `150 I St SE`), `The` before a street word
  with a city or an address word (`1 The Square, Lillington, NC 27546`), a Utah grid in words
  (`295 South 250 East`), the route in parentheses (`62 Portland Road (Route 1)`), a building's
  name after the street (`150 I St SE The Garrett, Washington, DC 20003`) or before a British
  one (`Guildhall, Gresham Street, London, EC2V 7HH`; `PO Box 111, Peveril Buildings, Peveril
  Square, Douglas, Isle of Man IM99 1JJ`), Nordic street words written apart (`Maria Dehlis vei
  15`), Romanian and Portuguese words (`Calea Victoriei 54`, `Tv. da Horta 27A`), lower-case
  Romance streets (`rua godinho de faria 1200`), elided particles (`Carrer d'Aragó 155`), Czech
  house numbers and postcodes (`Panenská 666/20` / `811 03 Bratislava`), house-number ranges
  before a postcode line (`Am Bürgerpark 15-18, 13156, Berlin`), 6-digit postcodes;
- messy US lines (usaddress's training lines): lower-case rural routes (`rr # 1 box 103 a`), a
  box alone before a city, state and ZIP (`Box # 63, Cordova, AK 99574`), a billing box's
  department, mail code or bin before it (`msc 410837 po box 415000`), ordinals and ZIP+4 as
  typed (`20Th Street`, `FL 337123824`), units `# 134-115`, `No 2202`, `MSC 24`, `APT F`, `bldg b`
  and a lower-case direction before a unit (`830 3rd st s # 105`), a number word with a unit,
  direction or tail (`Six Concourse Parkway Suite 2500`), a letter after the house number with a
  tail, unit or line of its own (`400 A South Boulevard, Evanston`; not `Chapter 12 A Long
  Road`), `&` in a name, numbered places (`5536 West 103 Place`), lower-case state roads and spurs
  (`20283 state road 7 ste 300`; `us`, `business`, `rd` alone score low), Hawaiian house numbers
  (`98-1247 Kaahumanu`), a lower-case city, comma and state that is no English word ending a
  line (`100 main los angeles, ca`); a lower-case street that begins its line with a house
  number of 3+ digits, the line holding nothing more than a few words with no stop word or
  count, takes the rest of its line (`3991 royal drive nw kennesaw`, `3340 peachtree road,
  tower place ste 1685`; not `2000 cars drive past daily`);
- street types of other languages, from libpostal's dictionaries (`screening/data/
  street_types.tsv`, rebuilt by `screening/data/update_street_types.py`; English words left
  out there): a street name and a house number with nothing else, when the name ends in a
  compound whose last part is a street type (`Skredderplassen 20`, `Gamla Varmdovagen 6`,
  `Bergstaðastræti 15`; not `Erlang 25`, `Halle 3`: the English words those parts end), a
  street type follows a capitalised name (`Brīvības iela 5`, `Atatürk Caddesi 5`) or comes
  before one (`Rua Augusta 5`, `náměstí Míru 5`); names in lower case only on a line of their
  own (`skredderplassen 20`, a query); libpostal's other spellings of the English street types
  count as the type (`29th Strt`, `Eisenhower Pkway`). Our own lists of European street words
  stay for the forms with floors, postcodes and abbreviations (`Str.`, `ul.`);
- a street with no street word in any language before a town GeoNames knows (`screening/data/
  cities.txt.gz`, towns of 15,000 people or more, names in the Latin script, rebuilt by
  `screening/data/update_cities.py`; English stop words, verbs and adjectives left out), after a
  comma or a line break and a postcode if any: a name and a number (`Korunní 810, Praha`,
  `Broadway 24, Manhattan`; the town after spaces only on a query's line, `Epleskogen 39A
  Oslo`), a number and a name beginning its line or after `at`, `to`, `is` (`27 Oakfield,
  Galway`; not `Top 5 Bars, Chicago`, `Windows 10 Pro, Berlin`), a bare line's or a direction's
  name ending in a town before a state (`1000 WOODLAWN Chicago IL`); the town must end the
  address (a line's or the text's end, a comma, a full stop, a postcode or state: not `Fallout
  4, Boston was the map`). On a line of its own with no town: a name and a house number with its
  letter (`Epleskogen 39A`), a number and `The` and a name (`16 The Stables`), a 2-digit number
  and a capitalised name (`16 Tullamore`), none between numbered lines (a list: `1 The
  Godfather`), no plural (`12 Monkeys`), no unit (`8 MiB`);
- core street types misspelt by hand (one letter left out or two swapped but the first, in a
  type of 6 letters or more: `boulevar`, `Pakway`, `steet`; not the English words among them,
  `garden`, `height`) after a house number of 2+ digits and a name, on a line the number begins
  or with a tail or an address word; initials inside a name (`100 GENERAL A S JOHNSON ST`,
  `201 joseph e. lowry blvd`); a rural route's box with its number left out before a comma
  (`RR 422 Box, Douglassville, PA 19518`);
- US routes with no street word after their number and street grids, as typed: `us`, `US` or
  `I` and a number on a line a house number begins (`500 us 19 clearwater fl`, `11745 I 10 W`;
  not `I ran 500 us dollars`), `Old` and a number and `Rd` or `Hwy` (`24850 OLD 41 RD`, `12188
  Old Number 6 Highway`), a direction on both sides of a grid's number (`654 n 800 e # 213`,
  `43 north 1250 west`, `48S 400E, Salt Lake City UT`; not `12 N 45 E`), one direction only
  before a known town ending the line (`132 n 10 Brooklyn`; not `Page 132 n 10`).

The span is the whole address: a street found with a house number takes its units and the tail
after it (city, state, province, postcode, country; a city alone only on the street's own line,
ending it), so no city or ZIP is left beside a redacted street. Scores: 0.85 with a postcode or
state tail, 0.7 for a street line alone (or with a unit, an address word before it, or on a line
of its own), 0.4 for an ambiguous street word or bare direction with nothing else (below the
screen's 0.5). `split_address` cuts a found address into its street
line and its tail for surrogates of the same shape (`screening.surrogates`).
"""

from __future__ import annotations

import gzip
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from screening.recognizers import FinderRecognizer
from screening.redact import Span

ENTITY = "STREET_ADDRESS"
WITH_TAIL, STREET, AMBIGUOUS = 0.85, 0.7, 0.4


def _cases(words: list[str] | tuple[str, ...]) -> str:
    """An alternation of each word as written, in lower case and in upper case."""
    variants = {v for w in words for v in (w, w.lower(), w.upper(), w[:1].upper() + w[1:])}
    return "|".join(re.escape(v) for v in sorted(variants, key=len, reverse=True))


# Street types that make an address on their own after a house number and a name.
CORE_TYPES = [
    "Street",
    "St",
    "Str",
    "Avenue",
    "Ave",
    "Av",
    "Road",
    "Rd",
    "Boulevard",
    "Blvd",
    "Lane",
    "Ln",
    "Drive",
    "Dr",
    "Court",
    "Ct",
    "Place",
    "Pl",
    "Terrace",
    "Ter",
    "Terr",
    "Circle",
    "Cir",
    "Parkway",
    "Pkwy",
    "Pky",
    "Highway",
    "Hwy",
    "Square",
    "Sq",
    "Crescent",
    "Cres",
    "Close",
    "Grove",
    "Gardens",
    "Gdns",
    "Mews",
    "Alley",
    "Aly",
    "Plaza",
    "Plz",
    "Trail",
    "Trl",
    "Turnpike",
    "Tpke",
    "Expressway",
    "Expy",
    "Freeway",
    "Fwy",
    "Causeway",
    "Cswy",
    "Embankment",
    "Parade",
    "Pde",
    "Quay",
    "Wynd",
    "Broadway",
    "Boul",
    "Hollow",
    "Crossing",
    "Xing",
    "Heights",
    "Hts",
    "Junction",
    "Jct",
    "Way",
    "Wy",
    "Row",
    "Walk",
]
EXTRA_TYPES = ("Line", "Concession", "Sideroad", "Hgwy", "Crt", "Ci", "Ctr", "Py", "Twp", "Rte")
ROUTE_TYPES = (
    "Highway|HIGHWAY|Hwy|HWY|Route|ROUTE|Rte|RTE|Road|ROAD|Rd|RD|FM|RM|PR|CR|SR|Business|BUSINESS|"
    "Interstate|I-|US|U\\.S\\.|State Road|State Route|County Road|COUNTY ROAD|CO RD|Co Rd|Farm Road|"
    "hwy|highway|rte|route|county road|state route|state road|Spur|SPUR|Loop|LOOP|Business Loop|"
    "U S|us|business|spur|fm|sr|cr|rd"
)
US_STATES = [
    "AL",
    "AK",
    "AZ",
    "AR",
    "CA",
    "CO",
    "CT",
    "DE",
    "DC",
    "FL",
    "GA",
    "HI",
    "ID",
    "IL",
    "IN",
    "IA",
    "KS",
    "KY",
    "LA",
    "ME",
    "MD",
    "MA",
    "MI",
    "MN",
    "MS",
    "MO",
    "MT",
    "NE",
    "NV",
    "NH",
    "NJ",
    "NM",
    "NY",
    "NC",
    "ND",
    "OH",
    "OK",
    "OR",
    "PA",
    "RI",
    "SC",
    "SD",
    "TN",
    "TX",
    "UT",
    "VT",
    "VA",
    "WA",
    "WV",
    "WI",
    "WY",
    "AS",
    "GU",
    "MP",
    "PR",
    "VI",
    "UM",
    "AA",
    "AE",
    "AP",
    "FM",
    "MH",
    "PW",
]
CA_PROVINCES = ["AB", "BC", "MB", "NB", "NL", "NS", "NT", "NU", "ON", "PE", "QC", "SK", "YT"]
_UNIT_WORDS = [
    "Apt",
    "Apartment",
    "Suite",
    "Ste",
    "Unit",
    "Fl",
    "Floor",
    "Rm",
    "Room",
    "Bldg",
    "Building",
    "Dept",
    "Flat",
    "Lot",
    "Trlr",
    "PMB",
    "Office",
    "Ofc",
    "Flr",
    "Bld",
    "Blg",
    "Spc",
    "Space",
    "Hngr",
    "Slip",
    "Mailbox",
    "Bin",
    "Box",
    "Level",
    "Studio",
    "Bureau",
    "MSC",
]
# Unit designators that stand without a number (USPS Publication 28, C2).
# Full words only in capitals ("FRONT"): "Flat Front" is prose.
_BARE_UNITS = ["Frnt", "Bsmt", "Lbby", "Lowr", "Uppr", "Ph", "FRONT", "REAR", "BASEMENT", "LOBBY"]
_ORDINAL = r"\d{1,3}(?:st|nd|rd|th|ST|ND|RD|TH|St|Nd|Rd|Th)"

_DIRECTION = (
    r"(?:[NS]\.[EW]\.|N|S|E|W|NE|NW|SE|SW|North|South|East|West|NORTH|SOUTH|EAST|WEST|So|"
    r"Northeast|Northwest|Southeast|Southwest)\.?"
)
_DIRECTION_ANY = rf"(?:{_DIRECTION}|(?:n|s|e|w|ne|nw|se|sw|north|south|east|west)\.?)"
_WORD_NUMBERS = "One|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|Eleven|Twelve"
# a capitalised word (O'Neil, St., Saint-Denis, Łaziska, Środa)
_CAP = r"[A-Z\u00c0-\u00d6\u00d8-\u00de\u0100-\u017f][\w'\u2019.\-]*"
# "rosa l parks", "joseph e. lowry": an initial too
_NAME_WORD = rf"(?:{_CAP}|{_ORDINAL}|[a-z][a-z'\-]*|[a-z]\.(?=[ \t]))"
_CITY = rf"{_CAP}(?:[ \-]{_CAP}){{0,3}}"
# A British town or county: "Isle of Man", "Newcastle upon Tyne", "Stratford-upon-Avon".
_CITY_UK = rf"{_CAP}(?:[ \-](?:(?:of|upon|on|under|le|in)[ \-])?{_CAP}){{0,3}}"
# A European city: "Waidhofen an der Ybbs", "Póvoa de Santa Iria", "'s-Heer Abtskerke".
_CITY_EU = (
    rf"(?:'s-)?{_CAP}(?:[ \-](?:(?:an der|an|am|im|bei|de|del|la|le|les|sur|sous|aan|den|op|"
    rf"di|do|da|dos)[ ])?{_CAP}){{0,4}}"
)
# The postcode of a European address line: 10115, 1015 CJ, 7108WL, 59-700, 411 34, 1000-001.
_EU_POSTCODE = (
    r"(?:[A-Z]{1,2}-)?(?:\d{2}-\d{3}|\d{3}[ ]\d{2}|\d{4}-\d{3}|\d{4}[ ]?[A-Z]{2}(?![a-z])|\d{4,6})"
)
_EU_TAIL = rf"(?:{_EU_POSTCODE}(?:\s*\n\s*|,?\s+){_CITY_EU}|(?P<city>{_CITY_EU})(?=[ \t]*(?:$|\n)))"
_UK_POSTCODE = r"[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}"
_CA_POSTCODE = r"[A-Z]\d[A-Z]\s?\d[A-Z]\d"
_SEP = r"(?:\s*,\s*(?:\n\s*)?|\s*\n\s*|\s+)"  # between parts: a comma, a line break or spaces
US_STATE_NAMES = (
    "Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|"
    "Hawaii|Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|"
    "Michigan|Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|"
    "New Mexico|New York|North Carolina|North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|"
    "Rhode Island|South Carolina|South Dakota|Tennessee|Texas|Utah|Vermont|Virginia|Washington|"
    "West Virginia|Wisconsin|Wyoming|District of Columbia|Puerto Rico"
)
_STATE = rf"(?:{'|'.join(US_STATES)}|{US_STATE_NAMES}|{US_STATE_NAMES.upper()})"
_CITY_ANY = r"[^\W\d_][\w'.\-]*(?:[ ][^\W\d_][\w'.\-]*){0,3}"
_COUNTRY = (
    r"(?:,?\s*(?:\n\s*)?(?:United States(?: of America)?|USA|U\.S\.A\.|Canada|United Kingdom|UK|"
    r"England|Scotland|Wales|Deutschland|Germany|France|Nederland|Netherlands|España|Spain|"
    r"Italia|Italy|Portugal|Polska|Poland|Sverige|Sweden|Danmark|Denmark|Belgi(?:um|ë|que)|"
    r"Österreich|Austria|Schweiz|Suisse|Switzerland|Ireland)\b)?"
)
_ZIP = r"\d{5}(?:[-\u2013\u2014]?\d{4})?(?!\d)"
_STATE_ABBR = "|".join(US_STATES)
_PROVINCE = "|".join(CA_PROVINCES)
# Canadian provinces and territories by name, in English and French, and `B.C.`
CA_PROVINCE_NAMES = (
    "Ontario|Qu[eé]bec|Nova Scotia|Nouvelle-[EÉ]cosse|New Brunswick|Nouveau-Brunswick|Manitoba|"
    "British Columbia|Colombie-Britannique|Prince Edward Island|[IÎ]le-du-Prince-[EÉ]douard|"
    "Saskatchewan|Alberta|Newfoundland and Labrador|Newfoundland|Terre-Neuve-et-Labrador|Yukon|"
    "Northwest Territories|Territoires [Dd]u Nord-Ouest|Nunavut|B\\.C\\."
)
# A Canadian city and province: `Montréal (Québec) H2S 3L5 Canada`, `Gatineau (Québec) Canada
# J9A 1L8`, `Winnipeg (Manitoba)`, `Barrie, Ontario L4N 8G1`, `Toronto, Ontario, Canada`.
_CA_COUNTRY = r"(?:[ \t]*,?[ \t]*(?:Canada|CANADA)(?![\w\-]))?"
_CA_TAIL = (
    rf"(?:(?:{_CITY_ANY}[ \t]*,?[ \t]*)?\((?:{CA_PROVINCE_NAMES})\){_CA_COUNTRY}"
    rf"(?:[ \t]*,?[ \t]*{_CA_POSTCODE}(?![\w\-]){_CA_COUNTRY})?"
    rf"|{_CITY_ANY}(?:\s*,\s*|\s+)(?:{CA_PROVINCE_NAMES})(?![\w\-])(?:,?\s+{_CA_POSTCODE})?)"
)
# US states in lower case that are no English word ("in", "me", "or", "ok", "hi" are)
_LOWER_STATES = "ak|az|ar|ca|ct|dc|fl|ga|ia|il|ks|ky|md|mi|mn|ms|mt|nc|nd|nh|nj|nm|nv|ny|ri|sc|sd|tn|tx|ut|va|vt|wa|wi|wv|wy"
# Australian states and territories: "Brookvale NSW 2100", "Melbourne, VIC 3004"
_AU_STATES = "NSW|VIC|Vic|QLD|Qld|SA|WA|TAS|Tas|NT|ACT"
_TAIL_US_CA_UK = (
    rf"{_SEP}(?P<tail>(?:{_CA_TAIL}|{_CITY_ANY}(?:\s*,\s*|\s*\n\s*|\s+)"
    rf"(?:(?:{_STATE}|{'|'.join(s.lower() for s in US_STATES)})\.?,?\s+{_ZIP}"
    rf"|(?:{_PROVINCE}),?\s+{_CA_POSTCODE}"
    rf"|(?:{_AU_STATES})\.?,?\s+\d{{4}}"
    rf"|{_UK_POSTCODE}|{_CA_POSTCODE}|{_ZIP})"
    rf"|{_CITY},\s*(?:{_STATE_ABBR}|{_PROVINCE}|{US_STATE_NAMES}|{US_STATE_NAMES.upper()})"
    # in lower case, a city, a comma and a state ending the line: "los angeles, ca"
    rf"|{_CITY_ANY},[ \t]*(?:{_LOWER_STATES})(?=[ \t]*(?:$|\n))"
    rf"|{_CITY}[ \t]+(?:{_STATE_ABBR}|{_PROVINCE}|{US_STATE_NAMES}|{US_STATE_NAMES.upper()})"
    rf"(?=[ \t]*(?:$|\n|[.;]))"
    rf"|(?:{_STATE_ABBR})\s+{_ZIP}|{_UK_POSTCODE}"
    rf"|{_CITY}(?:,\s*|\s*\n\s*)[A-Z]{{1,2}}\d[A-Z\d]?(?=[ \t]*(?:$|\n))"
    # a city alone: only at the end of its line (checked: on the street's own line)
    rf"|(?P<city>{_CITY})(?=[ \t]*(?:$|\n)))(?:\b|(?<=\))){_COUNTRY})"
)
_ADDRESS_WORDS = re.compile(
    r"(?:address|addr|live[sd]? (?:at|on)|living at|located at|reside[sd]? at|ship(?:ped)? to|"
    r"deliver(?:ed)? to|send (?:it )?to|mail(?:ed)? to|office (?:is )?at|moved to|based at|"
    r"residence|street|domicile|adresse|direcci[oó]n|indirizzo|endere[cç]o|anschrift|adres)"
    r"\W{0,3}(?:is\s+|at\s+|:\s*)?$",
    re.IGNORECASE,
)
# Street words no one writes in lower case after a number but for a street ("1919 west taylor
# street", "271 spring st nw"); "road", "drive", "way", "court", "walk" are everyday words too.
_PLAIN_TYPES = frozenset(
    [
        "street",
        "st",
        "str",
        "ave",
        "av",
        "blvd",
        "boulevard",
        "avenue",
        "rd",
        "ln",
        "dr",
        "ct",
        "pl",
        "ter",
        "terr",
        "cir",
        "pkwy",
        "parkway",
        "hwy",
        "highway",
        "trl",
        "tpke",
        "expy",
        "fwy",
    ]
)
# Words after a number that make it a count or a measure, not a house number.
_QUANTITIES = frozenset(
    [
        "minute",
        "min",
        "hour",
        "hr",
        "day",
        "week",
        "month",
        "year",
        "yr",
        "second",
        "sec",
        "ms",
        "time",
        "item",
        "point",
        "page",
        "word",
        "line",
        "people",
        "person",
        "user",
        "star",
        "follower",
        "like",
        "view",
        "vote",
        "comment",
        "reply",
        "mile",
        "km",
        "meter",
        "metre",
        "foot",
        "feet",
        "inch",
        "kb",
        "mb",
        "gb",
        "tb",
        "byte",
        "bit",
        "dollar",
        "buck",
        "euro",
        "pound",
        "cent",
        "percent",
        "degree",
        "step",
        "row",
        "column",
        "record",
        "file",
        "test",
        "error",
        "warning",
        "issue",
        "commit",
        "too",
        "many",
        "few",
        "several",
        "some",
    ]
)
# The last words of HTTP status lines (RFC 9110): "502 Bad Gateway" is no street.
_HTTP_REASONS = frozenset(
    [
        "OK",
        "Created",
        "Accepted",
        "Content",
        "Found",
        "Modified",
        "Redirect",
        "Permanently",
        "Request",
        "Unauthorized",
        "Required",
        "Forbidden",
        "Allowed",
        "Acceptable",
        "Timeout",
        "Conflict",
        "Gone",
        "Error",
        "Implemented",
        "Gateway",
        "Unavailable",
        "Requests",
        "Supported",
        "Continue",
        "Processing",
        "Entity",
        "Large",
        "Long",
    ]
)
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "this",
        "that",
        "these",
        "those",
        "my",
        "your",
        "our",
        "their",
        "his",
        "her",
        "its",
        "we",
        "you",
        "they",
        "i",
        "he",
        "she",
        "down",
        "up",
        "over",
        "into",
        "onto",
        "out",
        "about",
        "than",
        "then",
        "so",
        "but",
        "if",
        "not",
        "no",
        "per",
        "more",
        "less",
        "&",
    ]
)

# Street name first: German, Dutch, Nordic, Polish compounds and two-word forms.
# The compounds also written after their number ("1 Hämeenkatu", "12 Lindenstraße").
_COMPOUND = (
    "straße|strasse|weg|gasse|platz|allee|straat|gracht|laan|vej|gatan|vägen|gata|veien|katu|"
    "kuja|utca|ulica"
)
_EU_SUFFIXES = (
    "straße|strasse|str\\.|weg|gasse|platz|allee|damm|ufer|chaussee|steig|pfad|graben|"
    "straat|gracht|laan|plein|kade|singel|dijk|dreef|vej|gade|gatan|vägen|gata|veien|veg|katu|"
    "utca|ulica|stigen|gränd|torget|gränd|stræde|strade|allé|plads|torv|gata|katu|kuja|polku"
)
_EU_TYPES_WORD = (
    "Straße|Strasse|Str\\.|Weg|Gasse|Platz|Allee|Damm|Ufer|Chaussee|Ring|Markt|Steig|Straat|"
    "Laan|Plein|Kade|Gracht|Allé|Vej|Gade|Plads|Torv|Stræde|Gata|Gatan|Vägen"
)
_NAME_FIRST = re.compile(
    rf"(?<![\w\-])(?P<street>(?:(?:Am|An der|Auf dem|Im|In der|Unter den)[ ])?"
    rf"(?:(?:{_CAP}[ ]){{0,2}}{_CAP}(?:{_EU_SUFFIXES}|(?P<risky>ring|pad|steeg))|"
    rf"(?:{_CAP}[ \-]){{1,2}}(?:{_EU_TYPES_WORD})|"
    # Hungarian street words, in lower case: "Kazinczy utca 14", "kazinczy utca, 14"
    rf"(?:{_CAP}[ ]|[a-z\u00e0-\u017f]+[ ]){{1,2}}(?:utca|útja|út|tér|körút|köz|fasor|sétány)|"
    rf"(?:ul\.|al\.|pl\.|ulica|aleja|plac|os\.|osiedle)\s{_CAP}(?:\s{_CAP})?|"
    # Norwegian, Swedish, Danish street words written apart: "Maria Dehlis vei 15"
    rf"(?:{_CAP}[ ]){{1,2}}(?:vei|veien|vegen|veg|gate|gata|gaten|plass|torg|allé|stien|bakken|"
    rf"vägen|väg|gatan|gränd|vej|gade|plads))"
    r",?[ \t]+\d{1,4}(?:[ ]?[a-zA-Z](?!\w))?(?:[ ]?[-/][ ]?\d{1,4}[a-zA-Z]?)?\b"
    # a floor and side after the number: Danish "4 t.v.", "2. sal", Swedish "1 trappa upp"
    r"(?:,?[ \t]+(?:(?:\d{1,2}\.?|st\.?|kl\.?)[ \t]*(?:t\.?[ ]?v\.?|th\.?|tv|mf\.?|sal\.?)"
    r"|\d{1,2}[ \t]+(?:trappor|trappa|tr\.)(?:[ \t]+(?:upp|ned))?)(?![\w]))?)"
    rf"(?:{_SEP}(?P<tail>{_EU_TAIL}))?",
)

# A street without a street word ("Witthau 3", "Adama Asnyka 1", Mexican "LÓPEZ MATEOS, 106,
# 21840, MEXICALI"), kept only with the postcode
# and city after it that end the line: 5 digits (not a year-like 4), Polish 00-000, Nordic 4.
_NAME_NUMBER_POSTCODE = re.compile(
    # a Czech or Slovak house number: its register and street numbers ("Panenská 666/20")
    rf"(?<![\w\-])(?P<street>{_CAP}(?:[ ]{_CAP}){{0,2}},?[ \t]+\d{{1,4}}[a-zA-Z]?(?:[/\-]\d{{1,4}}[a-zA-Z]?)?)"
    # postcodes: 5 digits, Polish 00-000, Nordic 4, Czech, Slovak, Swedish, Greek 000 00
    rf"(?:[ \t]*,[ \t]*|[ \t]*\n[ \t]*)(?P<tail>(?:\d{{5}}|\d{{2}}-\d{{3}}|\d{{3}}[ ]\d{{2}}|(?!19|20)\d{{4}}),?[ \t]+"
    rf"{_CITY_EU})(?=[ \t]*(?:$|\n|,))"
)

# House number, street type, name: French (and Belgian, Swiss, Canadian French).
_FR_TYPES = _cases(
    [
        "rue",
        "avenue",
        "av.",
        "bd",
        "boul.",
        "boul",
        "boulevard",
        "place",
        "pl.",
        "chemin",
        "allée",
        "allee",
        "impasse",
        "quai",
        "route",
        "rte",
        "cours",
        "square",
        "passage",
        "voie",
        "faubourg",
        "fg",
        "rond-point",
        "promenade",
        "sentier",
        "ruelle",
        "esplanade",
        "villa",
        "cité",
        "lieu-dit",
        "hameau",
    ]
)
_FR_PARTICLE = "(?:de|du|des|la|le|les|l'|d'|l\u2019|d\u2019|aux|au|sur|en|et)"
# A unit after a French street (`bureau 1105`, `app. 4`) and a Canadian post-office box (`C.P.
# 500`, `Case postale 710`).
_FR_UNIT = (
    r"(?:,?[ \t]+(?:[Bb]ureau|BUREAU|[Aa]pp\.|[Aa]ppartement|[Ll]ocal|[Ss]uite|[Pp]orte)[ \t]+"
    r"\d{1,5}[A-Za-z]?(?![\w\-]))?(?:,?[ \t]+(?:C\.P\.|CP|[Cc]ase [Pp]ostale)[ \t]+\d{1,6}(?![\w\-]))?"
)
_NUMBER_FIRST_FR = re.compile(
    rf"(?<![\w\-])(?P<street>\d{{1,4}}(?:\s?(?:bis|ter|quater|[A-Da-d]))?,?\s+"
    # an ordinal before the type: `18e rue`, `1re Avenue`
    rf"(?:\d{{1,3}}(?:e|re|er|ème)\s+)?(?:{_FR_TYPES})\s+"
    rf"(?:{_FR_PARTICLE}\s?)*{_CAP}(?:[ \-](?:{_FR_PARTICLE}\s?)*(?!C\.P\.|Bureau\b){_CAP}){{0,4}}"
    rf"{_FR_UNIT})"
    rf"(?:{_SEP}(?P<tail>(?:F-)?\d{{5}}\s+{_CITY}(?:\s+(?:Cedex|CEDEX)(?:\s+\d{{1,2}})?)?"
    rf"|{_CA_TAIL}(?:(?<=\))|(?<=\w))))?",
)

# Street type, name, number: Spanish, Catalan, Italian, Portuguese, Brazilian.
_ROMANCE_TYPES = (
    "Calle|C/|Avenida|Avda\\.?|Paseo|Pº|Plaza|Pza\\.|Carrera|Camino|Carretera|Ronda|Travesía|"
    "Glorieta|Carrer|Passeig|Rambla|Via|Viale|Piazza|Piazzale|Corso|Largo|Vicolo|Strada|"
    "Contrada|Lungomare|Borgo|Rua|Rúa|Praça|Travessa|Alameda|Estrada|Rodovia|Av\\.|Avinguda|"
    "Rue|Avenue|Boulevard|Chaussée|Chemin|Quai|Place|Square|Dreef|Steenweg|Callejón|Cañada|"
    "Cuesta|Pasadizo|Acceso|C\\.|Incrocio|R\\.|Av|Vial|Urbanización|Pasaje|Calleja|Travesia|"
    "Pç\\.|Pça\\.?|Tv\\.|Trav\\.|Lg\\.|"
    # Romanian
    "Calea|Bulevardul|Bdul\\.?|B-dul|Splaiul|Șoseaua|Soseaua|Aleea|Piața|Piata|Intrarea|Str\\."
)
# The same in lower case, where the name may be too: "rua godinho de faria 1200"
_ROMANCE_TYPES_LOWER = "rua|calle|avenida|carrer|avinguda|calea|strada"
_ROMANCE_PARTICLE = r"(?:de|del|de la|de las|de los|la|el|los|las|di|della|delle|dei|degli|del|da|do|dos|das|d'|dell'|y|e|a|à|ao|às)"
# an elided particle before the name: "Carrer d'Aragó", "Via dell'Anima"
_ROMANCE_ELIDED = r"(?:d|l|dell|D|L)['\u2019]"
_TYPE_FIRST = re.compile(
    rf"(?<![\w\-])(?P<street>(?:(?:{_ROMANCE_TYPES})\s+(?:{_ROMANCE_PARTICLE}\s+|{_ROMANCE_ELIDED})?"
    rf"{_CAP}(?:\s+(?:{_ROMANCE_PARTICLE}\s+|{_ROMANCE_ELIDED})?{_CAP}){{0,4}}"
    rf"|(?:{_ROMANCE_TYPES_LOWER})\s+(?:{_ROMANCE_PARTICLE}\s+)?[a-z\u00e0-\u00ff]+"
    rf"(?:\s+(?:{_ROMANCE_PARTICLE}\s+)?[a-z\u00e0-\u00ff]+){{0,3}})"
    r",?\s+(?:(?:n\.?\s?º?\s?|nº\s?|n\.\s?|núm\.\s?)?\d{1,4}[A-Za-z]?|[Ss]/[Nn])"
    r"(?:(?:,?\s+|\s*-\s*)\d{1,2}\s?º\s?[A-Za-zª]?|[ ](?:Apt\.|Piso|Puerta|Appartamento|Piano|Interno|"
    r"Scala|Andar|Esc\.|Bajo)[ ]?\w{1,4})?)(?!\w)"
    rf"(?:{_SEP}(?P<tail>(?:\d{{5}}-\d{{3}},?\s+{_CITY_EU}|{_EU_TAIL})(?:\s+\([A-Z]{{2}}\))?|"
    rf"{_CITY},\s*\d{{5}}))?",
)

# A rural route or highway contract and its box (USPS Publication 28, 2.4 and 2.5): "RR 2 Box
# 152", "R.F.D. 3, Box 5", "HC 68 Box 23A", "HCR 45 Box 653", "Star Route Box 12", "Route 1 Box 7".
_RURAL_ROUTE = (
    r"(?:(?:R\.?R\.?|R\.?F\.?D\.?|H\.?C\.?R?\.?|"
    r"(?i:Rural Route|Rural Delivery|Highway Contract(?: Route| Rte)?|Star Route|Star Rte|Route|Rte\.?))[ \t]*#?[ \t]*(?:\d{1,4}[A-Za-z]{0,2}[ \t]*,?[ \t]*)?"
    # in lower case, or a farm road's box, only with the route's number: "rr # 1 box 103 a"
    r"|(?:rr|rt|RT|rfd|hcr?|FM|fm)[ \t]*#?[ \t]*\d{1,4}[A-Za-z]{0,2}[ \t]*,?[ \t]*)"
    r"(?i:Box|Bx)\.?[ \t]*#?[ \t]*\d{1,6}[A-Za-z]{0,2}(?:[ ][A-Za-z](?![\w\-]))?"
)
_PO_BOX = re.compile(
    # a billing box's department, mail code or bin before it: "msc 410837 po box 415000"
    r"(?<![\w\-])(?P<street>(?:(?i:dept|department|file|lock ?box|drawer|msc|bin|mail code|box)"
    r"\.?[ \t]*#?[ \t]*\d{1,12},?\s+(?=(?i:p|box|post|lock|lbx)))?"
    r"(?:(?:(?i:P\.?\s?O\.?\s?(?:Box|Bx)|Post Office Box|Lock ?box|lbx)|POB|Postfach|Postbus|"
    r"Apartado(?: de Correos)?|Apdo\.?|Casella Postale|Caixa Postal|B\.P\.|BP|Boîte Postale|"
    r"GPO Box|Locked Bag)\s*#?\s*\d{1,6}(?:-\d{1,6})?|"
    # a box alone, only with a city, state and ZIP after it: "Box # 63, Cordova, AK 99574"
    r"(?P<risky>Box|BOX)[ \t]*#?[ \t]*\d{1,6}(?=[ \t]*,)|"
    # a rural route's box with its number left out, before a comma: "RR 422 Box, Douglassville"
    r"(?:RR|R\.R\.|HCR?|rr|hcr?)[ \t]*#?[ \t]*\d{1,4}[ \t]+(?:Box|BOX|box)(?=[ \t]*,)|"
    rf"{_RURAL_ROUTE})"
    r"(?:,?\s+(?i:bin|dept|department|drawer|mail code|msc|ms|box)\.?[ \t]*#?[ \t]*\d{1,8}(?:-\d{1,4})?)?"
    rf"(?:\s+(?:{ROUTE_TYPES}|hwy|rte|route|highway)\.?[ \t]*\d{{1,5}})?)\b"
    rf"(?:{_TAIL_US_CA_UK}|{_SEP}(?P<eutail>\d{{4,5}}\s+{_CITY})\b)?",
)
# Colombian and other Andean grid addresses: street type and number, `#`, the cross street and
# the house's distance along it: "Cra 18#63-64 B", "Calle 26 No. 68C-61", "Av. 7 # 12-30".
_GRID_LATAM = re.compile(
    r"(?<![\w\-])(?P<street>(?:Calle|CALLE|Cl|CL|Carrera|CARRERA|Cra|CRA|Kr|KR|Cr|CR|Diagonal|Dg|"
    r"Transversal|Tv|Avenida|Av|AV|Ak|AK|Ac|AC)\.?[ \t]*\d{1,3}[ \t]?[A-Z]?(?:[ \t]?Bis)?[ \t]*"
    r"(?:#|No\.?|N°|Nº|n\.?º)[ \t]*\d{1,3}[ \t]?[A-Z]?[ \t]*-[ \t]*\d{1,3}(?:[ \t]+[A-Z](?!\w))?)"
)
_MILITARY = re.compile(
    r"(?<![\w\-])(?P<street>(?:(?:USNS|USNV|USS|USCGC)\s+[A-Z][\w'\-]+|"
    r"(?:PSC|Unit|CMR)\s+\d{4},?\s+Box\s+\d{4}))"
    r"(?:\s*,\s*|\s*\n\s*|\s+)(?P<tail>(?:APO|FPO|DPO)\s+A[AEP]\s+\d{5})\b"
)


@cache
def _street_types() -> tuple[
    frozenset[str], re.Pattern, re.Pattern, re.Pattern, re.Pattern, re.Pattern, tuple[str, str]
]:
    """(core types, the pattern of a house-number-first street line with all types, the same
    preferring the first street-type word to the last, the pattern of a street without a type
    word after a direction: `110 W Hubbard`, `6641 N 2200 W`, a UK address block ending in its
    postcode, a line that is a house number and a few words and nothing else, and the house
    number's and the units' and tail's parts of these patterns, for `_typo_pattern`)."""
    from faker.providers.address.en_US import Provider

    # a type's other spellings in libpostal's English dictionary count as the type ("29th Strt",
    # "harbour blvrd", "Eisenhower Pkway")
    core = frozenset(CORE_TYPES) | {s.capitalize() for s in _spellings(CORE_TYPES)}
    every = _cases(sorted(core | set(Provider.street_suffixes) | set(EXTRA_TYPES)))
    bare = "|".join(sorted({v for w in _BARE_UNITS for v in (w, w.upper())}, key=len, reverse=True))
    unit = (
        rf"(?:#[ \t]?)?(?:{_cases(_UNIT_WORDS)})\.?[ \t]*#?[ \t]*(?:(?:No|NO|no|Nº)\.?[ \t]*)?"
        rf"(?:[A-Za-z]{{0,2}}-?\d{{1,6}}(?:-\d{{1,4}})?[A-Za-z]{{0,3}}|[A-Z]{{1,2}}|[a-z])(?![\w\-])|"
        rf"#[ \t]?(?:[A-Za-z]{{1,2}}\d{{0,6}}|\d{{1,6}}(?:-\d{{1,6}})?)[A-Za-z]?(?![\w\-])|"
        rf"(?:No|NO|no)\.?[ \t]*\d{{1,6}}[A-Za-z]?(?![\w\-])|"
        rf"{_ORDINAL}[ \t]+(?:{_cases(['Floor', 'Fl', 'Flr'])})\b\.?|(?:{bare})(?![\w\-])"
    )
    # a house number; a unit before it (`104-18663`, `108 - 1550`; `718 - 8th Avenue`)
    number = (
        rf"(?:(?:\d{{1,6}}[A-Za-z]?(?:/\d{{1,4}}[A-Za-z]?|[ ]?-[ ]?\d{{1,6}}[A-Za-z]?|-[A-Z](?!\w)"
        rf"|[ ]?½|[ ]1/2|[ ]?-(?=[ \t]+{_ORDINAL}[ \t])|(?P<sletter>[ ][A-H](?=[ \t]+[A-Z])))?"
        rf"|[NSEWnsew]\d{{1,4}}[ ]?[NSEWnsew]\d{{1,5}})"
        rf"|(?P<wordnum>{_WORD_NUMBERS}))[ \t]+"
    )
    route = (
        rf"(?P<route>(?:(?:{ROUTE_TYPES})\.?[ \t]*#?\d{{1,5}}[A-Za-z]?|"
        rf"(?:County Road|COUNTY ROAD|CO RD|Co Rd|CR)[ \t]+[A-Z]{{1,3}})(?![\w\-])"
        rf"(?:[ \t]+(?:Business|BUSINESS|Bus\.|Spur|Loop|Bypass)(?![\w\-]))?)"
    )
    after = (
        # a direction after the street; in lower case only before a unit: "830 3rd st s # 105"
        rf"(?:[ \t]*,?[ \t]*(?:{_DIRECTION}|(?:n|s|e|w|ne|nw|se|sw|north|south|east|west)\.?"
        rf"(?=[ \t]*,?[ \t]*(?:{unit})))"
        rf"(?![\w\-]))?"
        rf"(?P<unit>(?:[ \t]*,?[ \t]*(?:{unit}))*"
        # a unit number with no unit word, ending the street's line: "Broadway Street 10"
        rf"(?:[ \t]+\d{{1,4}}[A-Za-z]?(?:-\d{{1,4}})?(?:[ \t]+[NSEW])?(?=[ \t]*(?:$|\n|,)))?"
        # the route a street is, in parentheses: "62 Portland Road (Route 1)"
        rf"(?:[ \t]+\((?:Route|Rte|Hwy|Highway|US|SR)[ \t]*\d{{1,4}}\))?"
        # a building's name after the street, before a comma: "150 I St SE The Garrett, ..."
        rf"(?:[ \t]+(?:The|THE)[ \t]+{_CAP}(?:[ \t]+{_CAP})?(?=[ \t]*,)"
        rf"(?:[ \t]*,[ \t]*(?:{unit}))*)?))"
        rf"(?:{_TAIL_US_CA_UK})?"
    )
    numbered_unit = (
        rf"(?:{_cases(['Apt', 'Apartment', 'Suite', 'Ste', 'Unit', 'Lot', 'Trlr'])})\.?[ \t]*#?[ \t]*"
        rf"(?:[A-Za-z]?-?\d|[A-Z](?![\w\-]))"
    )
    # a unit before an Australian house number: "Unit 12/345", "U12/345", "Lot 12/345"
    slash_unit = (
        rf"(?=[AaFfLlSsUu])(?:{_cases(['Unit', 'Apt', 'Apartment', 'Lot', 'Flat', 'Suite', 'Shop', 'U'])})"
        rf"\.?[ \t]*(?=\d{{1,4}}[A-Za-z]?/\d)"
    )
    numbered = (
        rf"(?:{_cases(['Street', 'St', 'Avenue', 'Ave', 'Place', 'Pl', 'Terrace', 'Court'])})\.?"
    )
    front = _cases(
        ["Camino", "Calle", "Avenida", "Alameda", "Paseo", "Corte", "Ave", "Avenue", "Av"]
    )
    patterns = []
    for lazy in ("", "?"):
        patterns.append(
            re.compile(
                rf"(?<![\w\-/.,])(?P<street>(?:(?:{unit})\s*,?\s+|{slash_unit})?{number}"
                rf"(?:(?P<predir>{_DIRECTION_ANY})[ \t]+)?"
                rf"(?:(?P<rname>{_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{0,2}}?[ \t]+)??{route}|"
                rf"(?P<name>{_NAME_WORD}(?:[ \t]+(?:{_NAME_WORD}|and|AND|&)){{0,3}}{lazy})[ \t]+"
                rf"(?P<type>(?:{every})\.?)(?![\w\-])|(?P<bare>Broadway|BROADWAY)(?![\w\-])|"
                # a numbered street or avenue without its ordinal: "18663 52 AVE", "13009 239b St."
                rf"(?P<numname>\d{{1,3}}[A-Za-z]?[ \t]+{numbered})(?![\w\-])|"
                # a European street word ending the name, number first: "1 Hämeenkatu"
                rf"(?P<compound>{_CAP}(?:{_COMPOUND}))(?![\w\-])|"
                # no street word, but a unit after: "4004 OCEAN FRONT APT 410"
                rf"(?P<uname>{_CAP}(?:[ \t]+{_CAP}){{0,2}})(?=[ \t]*,?[ \t]+(?:{numbered_unit}))|"
                rf"(?P<front>{front})\.?[ \t]+(?:{_ROMANCE_PARTICLE}[ \t]+|of[ \t]+|the[ \t]+)*"
                rf"(?P<fname>{_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{0,2}}?)(?![\w\-]))" + after
            )
        )
    directional = re.compile(
        rf"(?<![\w\-/.,])(?P<street>\d{{1,6}}[A-Za-z]?[ \t]+"
        rf"(?P<pre>[NS]\.?[EW]\.?|[NSEW]\.?|North|South|East|West|NORTH|SOUTH|EAST|WEST)[ \t]+"
        r"(?!(?:Dakota|Carolina|Virginia|Korea|America|Africa|Pole|Sea|Side|Coast|End)\b)"
        rf"(?P<name>\d{{1,5}}[ \t]+(?:[NSEW](?![\w\-])\.?|North|South|East|West|NORTH|SOUTH|EAST|"
        rf"WEST)|{_ORDINAL}|"
        rf"(?!(?:{every})\b){_CAP}(?:[ \t]+(?!(?:{every})\b){_CAP})?)(?![\w\-])" + after
    )
    # A UK address block without a house number: unit, street, town, postcode on their lines.
    uk_block = re.compile(
        rf"(?<![\w\-])(?P<street>"
        # a building's name or a PO box before the street, first on its line or after a comma:
        # "Guildhall, Gresham Street", "PO Box 111, Peveril Buildings, Peveril Square"
        rf"(?:(?:(?<![^\n])|(?<=,[ ]))(?:(?:P\.?O\.?[ ]Box[ \t]+\d{{1,6}}|{_CAP}(?:[ \t]+{_CAP}){{0,2}})"
        rf"[ \t]*,[ \t]*){{1,2}})?"
        rf"(?:(?:{_cases(['Flat', 'Studio', 'Apartment', 'Unit'])})[ \t]+"
        rf"\d{{1,4}}[A-Za-z]?[ \t]*(?:,[ \t]*|\n[ \t]*))?{_CAP}(?:[ \t]+{_CAP}){{0,3}}?[ \t]+"
        rf"(?:{every}))[ \t]*(?:,[ \t]*|\n[ \t]*)"
        # the town, and a county or island: "Douglas, Isle of Man IM99 1JJ"
        rf"(?P<tail>{_CITY_UK}(?:[ \t]*,[ \t]*{_CITY_UK})?(?:[ \t]*,[ \t]*|[ \t]*\n[ \t]*|[ \t]+)"
        rf"{_UK_POSTCODE})\b"
    )
    # A line that is an address line and nothing else, with no street word: "5429 woodlawn
    # chicago", "333 Nroth Michigan", "3901 south state steet 1st floor" (a form's or a table's
    # address field); the words are checked in `_number_first`.
    bare_line = re.compile(
        rf"^[ \t]*(?P<street>{number}(?:(?P<predir>{_DIRECTION_ANY})[ \t]+)?"
        rf"(?P<name>{_NAME_WORD}(?:[ \t]+{_NAME_WORD})?)(?![\w\-])" + after + r"[ \t]*$",
        re.MULTILINE,
    )
    return core, patterns[0], patterns[1], directional, uk_block, bare_line, (number, after)


_DIGIT = re.compile(r"\d")
_WORD_NUMBER = re.compile(rf"\b(?:{_WORD_NUMBERS})[ \t]+[A-Z]")
_UK_POSTCODE_ANYWHERE = re.compile(rf"\b{_UK_POSTCODE}\b")
# The other forms, each with a cheap search that must find something before the pattern runs.
_OTHER_FORMS = (
    (_NAME_FIRST, None),
    (_NUMBER_FIRST_FR, None),
    (_TYPE_FIRST, None),
    (
        _PO_BOX,
        re.compile(r"(?i:box|bx|postfach|postbus|apartado|apdo|casella|caixa|postale|bag)|B\.?P\b"),
    ),
    (_MILITARY, re.compile(r"\b[ADF]PO\b")),
    (_GRID_LATAM, re.compile(r"\d[ \t]?[A-Z]?[ \t]*(?:#|No|N°|Nº|nº)")),
    (_NAME_NUMBER_POSTCODE, re.compile(r"\d[a-zA-Z]?[ \t]*[,\n][ \t]*\d{2}")),
)


@dataclass(frozen=True)
class _Found:
    start: int
    end: int
    score: float


# Street types of many languages, from libpostal's dictionaries (screening/data/street_types.tsv,
# rebuilt by screening/data/update_street_types.py; English words left out there).
_LEXICON_PATH = Path(__file__).parent / "data" / "street_types.tsv"
# A word, then a house number on the same line: the candidates of the lexicon's street forms.
_NUMBER_AFTER_WORD = re.compile(  # a separator first: the regex engine scans for it fast
    r"[ \t,](?<=[^\W\d_][ \t,])(?:(?<=,)[ \t]+|(?<=[ \t])[ \t]*)"
    r"(?P<number>\d{1,4}(?:[ ]?[a-zA-Z](?![\w\-]))?(?:[ ]?[-/][ ]?\d{1,4}[a-zA-Z]?)?)"
    r"(?![\w\-%\u00b0]|[.,:]\d)"
)
_LAST_WORD = re.compile(r"[^\W\d_][\w'\u2019\-]*$")
_NAME_TOKEN = re.compile(r"[^\W\d_][\w'\u2019\-]*")
_TOKEN = re.compile(r"\S+")
_YEAR = re.compile(r"(?:1[89]|20)\d\d")
_LEXICON_TAIL = re.compile(rf"{_SEP}(?P<tail>{_EU_TAIL})")
# The little words inside a street's name after its type: "Rua do Sol a Santa Catarina", "Carrer
# de la Pau", "Ulica pod Lipami"
_NAME_PARTICLES = frozenset(
    [
        "de",
        "del",
        "della",
        "delle",
        "dei",
        "degli",
        "di",
        "da",
        "do",
        "dos",
        "das",
        "du",
        "des",
        "la",
        "le",
        "les",
        "el",
        "los",
        "las",
        "lo",
        "e",
        "y",
        "i",
        "a",
        "à",
        "ao",
        "na",
        "nad",
        "pod",
        "u",
        "v",
        "w",
        "z",
        "ze",
        "van",
        "der",
        "den",
        "von",
        "zu",
        "am",
        "im",
        "an",
    ]
)


@cache
def _lexicon_rows() -> tuple[tuple[str, str, str], ...]:
    return tuple(
        tuple(line.split("\t"))
        for line in _LEXICON_PATH.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    )


def _spellings(types: Iterable[str]) -> frozenset[str]:
    """libpostal's other spellings of these English street types, in lower case."""
    wanted = {t.lower() for t in types}
    return frozenset(f for f, how, of in _lexicon_rows() if how == "spelling" and of in wanted)


@cache
def _plain_types() -> frozenset[str]:
    return _PLAIN_TYPES | _spellings(_PLAIN_TYPES)


@cache
def _lexicon() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(street words written apart, compound endings, English words ending in one)."""
    kinds: dict[str, set[str]] = {"word": set(), "suffix": set(), "english": set()}
    for form, how, _ in _lexicon_rows():
        kinds.get(how, set()).add(form)  # "spelling" rows: `_spellings`
    suffixes = kinds["suffix"] | {_fold(f) for f in kinds["suffix"]}  # "Varmdovagen" as typed
    return frozenset(kinds["word"]), frozenset(suffixes), frozenset(kinds["english"])


def _fold(word: str) -> str:
    return "".join(
        c for c in unicodedata.normalize("NFD", word.casefold()) if not unicodedata.combining(c)
    )


def _compound(word: str) -> bool:
    """A word ending in a compound street type after a stem of 3 letters or more
    (`Skredderplassen`, `Linienstraße`, `Haarlemmerdijk`), no English word (`Erlang`)."""
    _, suffixes, english = _lexicon()
    key, folded = word.casefold(), _fold(word)
    if not any(
        key[-k:] in suffixes or folded[-k:] in suffixes for k in range(3, min(len(key) - 2, 14))
    ):
        return False
    return folded not in english


def _capitalised(word: str) -> bool:
    """`Augusta`, `MAIN`; not `of`, `NW`."""
    return (word[:1].isupper() and not word.isupper()) or (word.isupper() and len(word) > 3)


def _name_word(word: str) -> bool:
    """A word of a street's name in a sentence: capitalised, no stop word."""
    return _capitalised(word) and word.casefold() not in _STOP


def _name_word_alone(word: str) -> bool:
    """A word of a street's name on a line of its own (a query, a form's field): in lower case
    too."""
    return (_capitalised(word) or word.islower()) and word.casefold() not in _STOP


def _lexicon_streets(text: str) -> list[_Found]:
    """A street name and a house number with nothing else, by the street-type words of many
    languages (libpostal's): a compound ending in one (`Skredderplassen 20`, `Gamla
    Varmdovagen 6`), a capitalised name before one (`Brīvības iela 5`,
    `Henrik Walters plass 3`, `Atatürk Caddesi 5`) or after one (`Rua Augusta 5`, `náměstí Míru
    5`), then a postcode and city if any. Names in lower case only on a line of their own (a
    query or a form's field: `skredderplassen 20`)."""
    words, _, _ = _lexicon()
    found = []
    for m in _NUMBER_AFTER_WORD.finditer(text):
        if _YEAR.fullmatch(m.group("number")):
            continue  # "Gran Vía 2024": a year
        token = text[max(0, m.start() - 40) : m.start()].rsplit(None, 1)[-1]
        w = _LAST_WORD.search(token)
        if w is None:
            continue
        last, first = w.group(), m.start() - len(token) + w.start()
        key = last.casefold()
        if key in _STOP or key.rstrip("s") in _QUANTITIES:
            continue
        line_start = text.rfind("\n", 0, first) + 1
        offset = max(line_start, first - 80)
        tokens = list(_TOKEN.finditer(text, offset, first))
        names = []  # the word tokens right before `last`, nearest first
        for t in reversed(tokens):
            if not _NAME_TOKEN.fullmatch(t.group()) or len(names) == 5:
                break
            names.append((t.start(), t.group()))
        end, tail = _lexicon_tail(text, m.end())
        line_end = text.find("\n", end)
        alone = (
            offset == line_start
            and len(names) == len(tokens)
            and not text[end : len(text) if line_end < 0 else line_end].strip()
        )
        name = _name_word_alone if alone else _name_word
        start = None
        if name(last) and _compound(last):
            start = first
            for at, word in names[: 5 if alone else 2]:
                if not name(word):
                    break
                start = at
        elif (
            (last.islower() or _capitalised(last)) and key in words and names and name(names[0][1])
        ):
            for at, word in names[:3]:
                if not name(word):
                    break
                start = at
        elif name(last) or last.isdigit():
            # the type first: the farthest type word with only name words between it and `last`
            for i, (at, word) in enumerate(names):
                folded = word.casefold()
                if folded in words and (word[0].isupper() or name(names[i - 1][1] if i else last)):
                    start = at
                if not (name(word) or folded in _NAME_PARTICLES or folded in words):
                    break
        if start is None and _name_word(last) and not last.isupper() and key not in _NOT_HOUSE:
            # no street word, but a town GeoNames knows after a comma or a line break:
            # "Korunní 810, Praha", "Broadway 24, Manhattan"
            # the town after spaces only on a query's line, a house number of 2 digits or with
            # its letter ("Epleskogen 39A Oslo"; not "Fallout 4 Boston")
            spaced = offset == line_start and not re.fullmatch(r"\d", m.group("number"))
            city = _city_after(text, m.end(), spaced=spaced)
            if city is None and alone and re.fullmatch(r"\d{1,4}[ ]?[a-zA-Z]", m.group("number")):
                city = end  # a query of a name and a house number with its letter: "Epleskogen 39A"
            if city is not None:
                start, end = first, max(end, city)
                for at, word in names[:2]:
                    if not _name_word(word):
                        break
                    start = at
        if start is not None:
            found.append(_Found(start, end, WITH_TAIL if tail else STREET))
    return found


def _lexicon_tail(text: str, end: int) -> tuple[int, bool]:
    """Where a street found by `_lexicon_streets` ends with its postcode and city (True) or its
    city alone on the same line (False)."""
    t = _LEXICON_TAIL.match(text, end)
    if t and not t.group("city"):
        return t.end(), True
    if t and "\n" not in text[end : t.start("tail")]:
        return t.end(), False
    return end, False


# Towns of 15,000 people or more, GeoNames' (screening/data/cities.txt.gz, rebuilt by
# screening/data/update_cities.py; English words left out there): a street with no street word
# is an address when such a town follows it (`Korunní 810, Praha`).
_CITIES_PATH = Path(__file__).parent / "data" / "cities.txt.gz"
_CITY_WORD = re.compile(r"[^\W\d_][\w'\u2019.\-]*")
_SPACES = re.compile(r"[ \t]+")
_LINE_END = re.compile(r"[ \t]*(?:$|\n)")
# the line before begins with a number: a numbered list's
_NUMBERED_LINES = re.compile(r"(?:^|\n)[ \t]*\d[^\n]*\n[ \t]*\Z")
# after a street: a comma or a line break, then a postcode if any ("Epleskogen 39A, 0371 Oslo")
_BEFORE_CITY = re.compile(rf"[ \t]*(?:,[ \t]*(?:\n[ \t]*)?|\n[ \t]*)(?:{_EU_POSTCODE},?[ \t]+)?")
# A house number, then a capitalised name with no street word ("16 Tullamore", "16 The
# Stables"): an address with a known town after it.
_NUMBER_NAME = re.compile(
    rf"(?<![\w\-/.,$\u00a3\u20ac#])(?P<number>\d{{1,5}}[A-Za-z]?)[ \t]+"
    rf"(?P<name>(?:The[ \t]+)?{_CAP}(?:[ \t]+{_CAP}){{0,2}})(?=[ \t]*(?:[,\n]|$))"
)


# what ends an address's town: its line, a comma, a full stop, a postcode, district or state
# ("Praha 2", "Chicago IL"); not a sentence going on ("Fallout 4, Boston was great")
_AFTER_CITY = re.compile(r"[ \t]*(?:$|\n|[,;)]|\.(?!\w)|\d|[A-Z]{2}(?![\w\-]))")


# Words right before a number that make it a part, a rank or a count, not a house number after
# a street's name ("Season 3, Paris", "Chapter 12, London", "Top 5, Chicago")
_NOT_HOUSE = frozenset(
    [
        "top",
        "best",
        "worst",
        "first",
        "last",
        "next",
        "only",
        "over",
        "under",
        "about",
        "around",
        "season",
        "episode",
        "chapter",
        "part",
        "volume",
        "vol",
        "level",
        "stage",
        "round",
        "act",
        "scene",
        "book",
        "track",
        "game",
        "grade",
        "class",
        "room",
        "gate",
        "table",
        "platform",
        "terminal",
        "section",
        "phase",
        "version",
        "edition",
        "number",
        "no",
        "figure",
        "fig",
        "article",
        "rule",
        "lesson",
        "module",
        "paragraph",
        "floor",
        "week",
        "day",
        "year",
        "ages",
        "aged",
        "age",
    ]
)


_BEFORE_HOUSE = frozenset(["at", "to", "is", "on", "from", "in"])  # "I live at 16 Tullamore, ..."


@cache
def _cities() -> frozenset[str]:
    with gzip.open(_CITIES_PATH, "rt", encoding="utf-8") as f:
        return frozenset(line.rstrip("\n") for line in f if not line.startswith("#"))


def _known_city(text: str, at: int) -> int | None:
    """The end of a town GeoNames knows (`Praha`, `Pimpri-Chinchwad`, `New York`), capitalised as
    written, that begins at `at`: the longest of up to 4 words; else None."""
    words = []
    for _ in range(4):
        w = _CITY_WORD.match(text, at)
        if w is None:
            break
        words.append(w)
        if text[w.end() : w.end() + 1] != " ":
            break
        at = w.end() + 1
    if not words or not words[0].group()[:1].isupper():
        return None
    cities = _cities()
    for n in range(len(words), 0, -1):
        name = " ".join(w.group() for w in words[:n]).rstrip(".")
        end = words[0].start() + len(name)
        if name.casefold() in cities and _AFTER_CITY.match(text, end):
            return end
    return None


def _city_after(text: str, end: int, spaced: bool = False) -> int | None:
    """The end of a known town after a street that ends at `end`, past a comma or a line break
    and a postcode (`, Praha`; `0371 Oslo` on the next line), or (`spaced`) past spaces when the
    town ends its line (`Epleskogen 39A Oslo`, a query); else None."""
    sep = _BEFORE_CITY.match(text, end)
    if sep:
        return _known_city(text, sep.end())
    sep = _SPACES.match(text, end) if spaced else None
    town = _known_city(text, sep.end()) if sep else None
    return town if town is not None and _LINE_END.match(text, town) else None


def _ends_in_town(text: str, m: re.Match) -> bool:
    """The last word or words of a street pattern's name are a town GeoNames knows, the name's
    end an address's (`1000 WOODLAWN Chicago IL`, `4420 N. Bryn Mawr Chicago`)."""
    name = m.group("name")
    at = [w.start() for w in re.finditer(r"(?<![^ \t])\S", name)][1:]
    return any(_known_city(text, m.start("name") + i) == m.end("name") for i in at)


def _gazetteer_streets(text: str) -> list[_Found]:
    """A house number and a capitalised name with no street word, then a comma or a line break
    and a town GeoNames knows (`16 Tullamore, Galway`, `16 The Stables, Dublin`), or `The` and a
    name on a line of their own (`16 The Stables`)."""
    found = []
    for m in _NUMBER_NAME.finditer(text):
        number, words = m.group("number"), m.group("name").split()
        before = text[text.rfind("\n", 0, m.start()) + 1 : m.start()].split()
        if (
            _YEAR.fullmatch(number)
            or _http_status(m.group())
            or (before and before[-1][-1].isalnum() and before[-1].casefold() not in _BEFORE_HOUSE)
        ):
            continue  # the number begins its line or follows punctuation or "at", "to", "is"...:
            # not "Top 5 Bars, Chicago", "Windows 10 Pro, Berlin", "in 2019 Paris, London"
        if (
            any(
                w.casefold() in _STOP - {"the"} or w.casefold().rstrip("s") in _QUANTITIES
                for w in words
            )
            or not _capitalised(words[-1])
            or words == ["The"]
        ):
            continue  # "5 Things to do, Paris"
        end = _city_after(text, m.end())
        if (
            end is None
            and words[0] == "The"
            and not before
            and _LINE_END.match(text, m.end())
            and not _NUMBERED_LINES.search(text, max(0, m.start() - 200), m.start())
            and not re.match(r"[ \t]*\n[ \t]*\d", text[m.end() :])
        ):
            end = m.end()  # a line of its own, a house's number and name: "16 The Stables"; not
            # a numbered list's line ("1 The Godfather" between other numbered lines)
        if end is not None:
            found.append(_Found(m.start(), end, STREET))
    return found


# The core street types (`CORE_TYPES`) misspelt, for lines typed by hand ("2161 palm beach lakes
# boulevar", "Pakway", "3901 south state steet"): one letter left out or two swapped, but the
# first, in a type of 6 letters or more, the misspelling of 5 or more. Not the 6 that are English
# words (`garden`, `height`, `circe`, `hollo`, `cossing`, `paraed`: spaCy's lemmatizer tables,
# checked when this list was made).
_TYPO_NOT = frozenset(["garden", "height", "circe", "hollo", "cossing", "paraed"])
# the words of up to 5 after a house number on its line, the candidates for a misspelt type
_TYPO_WORDS = re.compile(r"\d[A-Za-z]?[ \t]+((?:[^\W\d_][\w.'\-]*[ \t]+){0,4}[A-Za-z]{5,10})\b")


@cache
def _typos() -> dict[str, str]:
    """misspelling -> the core street type it misspells."""
    core = {t.lower() for t in CORE_TYPES if len(t) >= 6}
    known = {t.lower() for t in CORE_TYPES} | _spellings(CORE_TYPES)
    out = {}
    for t in sorted(core):
        forms = [t[:i] + t[i + 1 :] for i in range(1, len(t))]
        forms += [t[:i] + t[i + 1] + t[i] + t[i + 2 :] for i in range(1, len(t) - 1)]
        for f in forms:
            if len(f) >= 5 and f != t and f not in known and f not in _TYPO_NOT:
                out[f] = t
    return out


@cache
def _typo_pattern() -> re.Pattern:
    """A house-number-first street whose street word is one of these misspellings, with its
    units and tail (the parts of `_street_types`' patterns); compiled once, run only on a text
    that holds a misspelling after a number."""
    number, after = _street_types()[6]
    typos = "|".join(sorted(_typos(), key=len, reverse=True))
    return re.compile(
        rf"(?<![\w\-/.,])(?P<street>{number}(?:(?P<predir>{_DIRECTION_ANY})[ \t]+)?"
        rf"(?P<name>{_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{0,3}}?)[ \t]+(?i:{typos})\.?"
        r"(?![\w\-])" + after
    )


def _typo_streets(text: str) -> list[_Found]:
    """A house number, a name and a misspelt core street type (`2161 palm beach lakes boulevar
    suite 408`, `1800 Green Hills Pakway`): the line begins with the number, or a tail or an
    address word makes it an address."""
    typos = _typos()
    if not any(w.lower() in typos for run in _TYPO_WORDS.findall(text) for w in run.split()):
        return []
    found = []
    for m in _typo_pattern().finditer(text):
        words = m.group("name").split()
        if any(w.lower() in _STOP for w in words) or _house_digits(m) < 2:
            continue
        end, tail = _tail_end(text, m)
        line_start = not text[text.rfind("\n", 0, m.start()) + 1 : m.start()].strip()
        context = _ADDRESS_WORDS.search(text, max(0, m.start() - 40), m.start())
        if tail or line_start or context:
            found.append(_Found(m.start(), end, WITH_TAIL if tail else STREET))
    return found


# Numbered US routes with no street word after them and street grids, as typed in usaddress's
# lines: `500 us 19 clearwater fl`, `11745 I 10 W`, `4354 US 117 SOUTH ALT HWY`, `24850 OLD 41
# RD`, `12188 Old Number 6 Highway`; `654 n 800 e # 213`, `43 north 1250 west`, `15 W 400 North
# Frontage Rd`, `48S 400E, Salt Lake City UT`, `132 n 10 Brooklyn`.
_GRID_DIRECTION = (
    r"(?:[NSEWnsew]|North|South|East|West|NORTH|SOUTH|EAST|WEST|north|south|east|west)\.?"
)
# a cheap search that must find one of these shapes before the pattern runs
_ROUTE_GRID_HINT = re.compile(
    r"\d[ \t]+(?:(?:us|US|U\.S\.|I)[ \t]+\d|(?:old|Old|OLD)[ \t]|(?i:[nsew]|north|south|east|west)"
    r"\.?[ \t]+\d)|\d[NSns][ \t]+\d+[EWew]"
)


@cache
def _route_grid_pattern() -> re.Pattern:
    """A house number and a route with no street word after it (`us 19`, `I 10`, `Old 41 Rd`) or
    a grid (a direction, a number and a direction: `n 800 e`; `48S 400E`), with its units and
    tail (the parts of `_street_types`' patterns)."""
    number, after = _street_types()[6]
    return re.compile(
        rf"(?<![\w\-/.,])(?P<street>{number}(?:"
        rf"(?P<old>(?:Old|OLD|old)[ \t]+(?:(?:Number|NUMBER|No\.?|NO\.?)[ \t]+)?\d{{1,4}}[A-Za-z]?"
        rf"[ \t]+(?:Road|ROAD|Rd|RD|Highway|HIGHWAY|Hwy|HWY)\.?)|"
        rf"(?P<route>(?:us|US|U\.S\.|I)[ \t]+\d{{1,4}}[A-Za-z]?)|"
        rf"(?P<grid>{_GRID_DIRECTION}[ \t]+\d{{1,5}}(?P<post>[ \t]+{_GRID_DIRECTION})?)|"
        rf"(?P<packed>\d{{1,5}}[EW]))(?![\w\-])" + after
    )


def _route_grid_streets(text: str) -> list[_Found]:
    """Routes and grids with no street word (`_route_grid_pattern`), each on a line the house
    number begins or with a tail, a unit or an address word before it: `Old` and a number and
    `Rd` or `Hwy`; `us`, `US` or `I` and a number after a house number of 3+ digits (no year)
    beginning its line, the line holding nothing more than a few words with no stop word or
    count, beginning with a direction or ending in a street word, a state or a ZIP, and the
    address taking it (`500 us 19 clearwater fl`, `11745 I 10 W`, `4354 US 117 SOUTH ALT HWY`;
    not `I ran 500 us dollars`, `500 US 20 largest companies`, `2019 I 10x'd it`); a grid with a direction on both
    sides of its number of 3+ digits or with a unit or tail, after a house number of 2+ digits
    (`654 n 800 e # 213`; not `12 N 45 E`, coordinates), or a number and one direction before a
    town GeoNames knows ending the line (`132 n 10 Brooklyn`; not `Page 132 n 10`); `48S 400E`
    only with its tail."""
    if not _ROUTE_GRID_HINT.search(text):
        return []
    found = []
    for m in _route_grid_pattern().finditer(text):
        if _house_digits(m) < 2:
            continue
        end, tail = _tail_end(text, m)
        line_start = not text[text.rfind("\n", 0, m.start()) + 1 : m.start()].strip()
        unit = m.group("unit").strip()
        if not (
            line_start
            or tail
            or unit
            or _ADDRESS_WORDS.search(text, max(0, m.start() - 40), m.start())
        ):
            continue
        if m.group("route"):
            line_end = _address_line(text, m, m.group("route").split()[-1:])  # its number
            rest = text[m.end("route") : line_end or m.end()].split()
            if (
                line_end is None
                or _YEAR.fullmatch(m.group("street").split()[0])
                or not (
                    not rest
                    or re.fullmatch(_GRID_DIRECTION, rest[0])
                    or rest[-1].upper() in US_STATES
                    or re.fullmatch(r"\d{5}(?:-\d{4})?", rest[-1])
                    or rest[-1].capitalize() in _street_types()[0]
                )
            ):
                continue  # the rest of the line nothing, or a direction, a street word, a state or
                # a ZIP: not "500 US 20 largest companies"
            end = max(end, line_end)
        elif m.group("packed"):
            if not (tail and re.match(r"\d+[NSns][ \t]", m.group("street"))):
                continue  # "48S 400E, Salt Lake City UT"; not "16S 2000W" (a battery)
        elif m.group("grid"):
            city = m.group("city")
            town = line_start and city and _known_city(text, m.start("city")) == m.end("city")
            if not (
                town or (m.group("post") and (len(m.group("grid").split()[1]) >= 3 or tail or unit))
            ):
                continue  # a grid's number of 3+ digits ("654 n 800 e"), or its tail, unit or
                # town: not "12 N 45 E" (coordinates)
        found.append(_Found(m.start(), end, WITH_TAIL if tail else STREET))
    return found


def find_addresses(text: str) -> list[Span]:
    """Street addresses in a text, scored (see the module doc)."""
    if not _DIGIT.search(text):
        return _number_first(text) if _WORD_NUMBER.search(text) else []
    found: list[_Found] = []
    found += _number_first(text)
    found += _lexicon_streets(text)
    found += _gazetteer_streets(text)
    found += _typo_streets(text)
    found += _route_grid_streets(text)
    for pattern, hint in _OTHER_FORMS:
        if hint is not None and not hint.search(text):
            continue
        for m in pattern.finditer(text):
            end, tail = _tail_end(text, m)
            if m.groupdict().get("risky") and not tail:
                continue  # "Spring 2024", "Notepad 2": a -ring or -pad street needs its postcode
            found.append(_Found(m.start(), end, WITH_TAIL if tail else STREET))
    return [Span(f.start, _trim(text, f.start, f.end), ENTITY, f.score) for f in _longest(found)]


def _trim(text: str, start: int, end: int) -> int:
    """A sentence's full stop is no part of an address ("Berlin."; "St." keeps its own)."""
    last = text[start:end].split()[-1]
    return end - 1 if last.endswith(".") and len(last) > 4 and "." not in last[:-1] else end


def _number_first(text: str) -> list[_Found]:
    core, greedy, lazy, directional, uk_block, bare_line, _ = _street_types()
    found = []
    # The lazy pattern matches where the greedy one does (the same strings, another preference):
    # "6618 FROST LAKE LANE" (greedy) but "12 Main St and Park Ave" (lazy: "12 Main St").
    matches = []
    for m in greedy.finditer(text):
        matches.append(m)
        other = lazy.match(text, m.start())
        if other and other.end() != m.end():
            matches.append(other)
    for m in matches:
        name = (
            m.group("name")
            or m.group("rname")
            or m.group("fname")
            or m.group("uname")
            or m.group("compound")
            or m.group("numname")
            or ""
        )
        kind = (m.group("type") or m.group("bare") or "Street").rstrip(".")
        if m.group("numname"):
            name, kind = name.split()[0], name.split()[-1].rstrip(".")
            if _house_digits(m) < 2:
                continue  # "Windows 7 10 Street"? a house number has two digits at least
        route = m.group("route")
        words = name.split()
        lower = [w for w in words if w[0].islower()]
        end, tail = _tail_end(text, m)
        unit = m.group("unit").strip()
        context = bool(_ADDRESS_WORDS.search(text, max(0, m.start() - 40), m.start()))
        alone = _whole_line(text, m.start(), end)
        # "A Avenue", "I St": a one-letter name is no article or pronoun
        # an initial inside a name is no stop word: "100 GENERAL A S JOHNSON ST", "13011 T I BLVD"
        stops = [
            w
            for i, w in enumerate(words)
            if w.lower() in _STOP and not (len(w) == 1 and w.isupper() and (i or len(words) == 1))
        ]
        if stops and not (
            (set(stops) <= {"and", "AND", "&"} and (tail or alone))
            or (stops == words[:1] == ["The"] and (tail or context or alone))
            # an ALL-CAPS line of its own or with its tail: "4351 THE CIRCLE AT NORTH HILLS ST"
            or (name.isupper() and kind.isupper() and kind.capitalize() in core and (tail or alone))
        ):
            continue  # "3 Wind and Fire Dr", "1 The Square" with a city, or on a line of its own
        if kind and not kind[0].isupper() and kind.lower() not in {t.lower() for t in core}:
            continue  # an ambiguous street word in lower case: "3 key points"
        plain = kind.lower() in _plain_types() and _house_digits(m) >= 2
        if lower and not (
            tail or context or unit or (alone and kind.capitalize() in core) or plain
        ):
            line_end = _address_line(text, m, words)
            if line_end is None:
                continue  # "5 blocks down" is no street; "12 main road" needs a tail or context
            end = line_end  # the rest of its line is the address's too: "nw kennesaw"
        if _http_status(m.group("street")):
            continue  # "502 Bad Gateway"
        if m.group("sletter") and not (tail or unit or context or alone):
            continue  # "400 A South Boulevard, Evanston"; not "Chapter 12 A Long Road"
        if m.group("wordnum") and not (
            kind.capitalize() in core and (len(words) >= 2 or tail or unit or m.group("predir"))
        ):
            continue  # "One Way Street"; "One Jelly Belly Lane", "Six Concourse Parkway Suite
            # 2500" and "One S. Dearborn St., Chicago, IL 60603" are streets
        if tail:
            score = WITH_TAIL
        elif unit or context:
            score = STREET
        elif route:
            named = re.match(
                r"(?:U\.?S\.?|US|U S|I-|Business|BUSINESS|PR|CR|SR|RM|us|business|spur|fm|sr|cr|rd)\b",
                route,
            )
            score = STREET if words or not named else AMBIGUOUS
        elif kind.capitalize() in core or kind in core or (alone and _house_digits(m) >= 2):
            score = STREET
        else:
            score = AMBIGUOUS
        found.append(_Found(m.start(), end, score))
    if _UK_POSTCODE_ANYWHERE.search(text):
        found += [_Found(m.start(), m.end(), WITH_TAIL) for m in uk_block.finditer(text)]
    for m in bare_line.finditer(text):
        words = m.group("name").split()
        first = words[0].lower()
        # the name's second word a town GeoNames knows before a state: "1000 WOODLAWN Chicago IL"
        town = len(words) == 2 and m.group("city") and _ends_in_town(text, m)
        if (
            m.group("wordnum")
            or {w.lower() for w in words} & _STOP
            or first in _QUANTITIES
            or first.rstrip("s") in _QUANTITIES
            or (_house_digits(m) < 3 and not _house_line(text, m, words))
            or (len(words) == 1 and words[0].islower() and words[0].endswith("s"))
            or (
                m.group("city") and "\n" not in text[m.end("street") : m.start("tail")] and not town
            )
            or _http_status(m.group(0).strip())
        ):
            continue  # "30 minutes", "296 employees", "100 of them": a count, not a house
        end, tail = _tail_end(text, m)
        if (
            tail
            and not re.search(r"[\d,\n]", text[m.start("tail") : end])
            and _known_city(text, m.start("tail")) is None
        ):
            continue  # "130 AUTOMATIC STRAPPING MACHINE CO": a "city and state" with no ZIP,
            # comma or line break is a product line's last words. Every tail of a bare line
            # is checked, a name with a street word too ("12 Main Street Dayton OH"): such a
            # line is the street patterns' to find, with its tail (restricting the check to
            # names without a street word changed no finding on the dev halves or on prose);
            # unless its city is a town GeoNames knows ("1000 WOODLAWN Chicago IL")
        pre = m.group("predir") or ""
        if not (tail or m.group("unit").strip()) and (
            re.match(r"(?:1[89]|20)\d\d\D", m.group("street"))  # "1934 North Dakota"
            or (len(pre) == 1 and not (words[0].isupper() and len(words[0]) > 3))
        ):
            continue  # a year and a title; "100 W Power Supply", "60 W LED bulb": watts
        found.append(_Found(m.start("street"), end, WITH_TAIL if tail else STREET))
    for m in directional.finditer(text):
        end, tail = _tail_end(text, m)
        unit = m.group("unit").strip()
        if tail:
            score = WITH_TAIL
        elif unit or _ADDRESS_WORDS.search(text, max(0, m.start() - 40), m.start()):
            score = STREET
        else:  # "1020 W BRYN MAWR", "1604 W. Farwell"; not "100 W Power Supply", "60 W LED"
            name, pre = m.group("name"), m.group("pre")
            marked = "." in pre or len(pre) > 2 or name.isupper() or name[0].isdigit()
            town = (
                m.group("city") and _known_city(text, m.start("city")) == m.end("city")
            ) or _ends_in_town(text, m)
            score = STREET if (_house_digits(m) >= 3 or town) and marked else AMBIGUOUS
        found.append(_Found(m.start(), end, score))
    return found


def _house_line(text: str, m: re.Match, words: list[str]) -> bool:
    """A line of its own that is a house number of 2 digits and a capitalised name with no unit
    or tail (`16 Tullamore`, `28 Lullwater`: a query or a form's field); not a numbered list's
    line (`12 Godfather` between other numbered lines), a plural count (`12 Monkeys`), a unit
    (`8 MiB`) or a section's heading of one digit (`3 Conclusion`)."""
    return (
        _house_digits(m) == 2
        and not (m.group("unit").strip() or m.group("tail") or m.group("predir"))
        and all(_name_word(w) and w[1:].islower() for w in words)
        and not words[-1].endswith("s")
        and not _NUMBERED_LINES.search(text, max(0, m.start() - 200), m.start())
        and not re.match(r"[ \t]*\n[ \t]*\d", text[m.end() :])
    )


def _address_line(text: str, m: re.Match, words: list[str]) -> int | None:
    """The end of the line of a lower-case street that begins its line with a house number of
    3 digits or more, when the line holds nothing else but a few words with no stop word or
    count (a direction, a building, a unit, a city: "3991 royal drive nw kennesaw", "3340
    peachtree road, tower place ste 1685"; not "2000 cars drive past the school"); else None."""
    if _house_digits(m) < 3 or text[text.rfind("\n", 0, m.start()) + 1 : m.start()].strip():
        return None
    line_end = text.find("\n", m.end("street"))
    line_end = len(text) if line_end < 0 else line_end
    rest = re.findall(r"[^\W\d_]+", text[m.end("street") : line_end])
    if (
        len(rest) > 5
        or words[0].lower().endswith("s")  # "2000 cars drive": a count of things
        or any(w.lower() in _STOP or w.lower().rstrip("s") in _QUANTITIES for w in words + rest)
    ):
        return None
    return len(text[:line_end].rstrip())


def _http_status(street: str) -> bool:
    """An HTTP status line ("502 Bad Gateway", "404 Not Found"), not a street."""
    return bool(re.match(r"[1-5]\d\d\D", street)) and street.split()[-1] in _HTTP_REASONS


def _tail_end(text: str, m: re.Match) -> tuple[int, bool]:
    """Where an address ends, and whether a postcode or state ends it: a city alone is taken
    only on the street's own line, and adds nothing to the score."""
    groups = m.groupdict()
    if not (groups.get("tail") or groups.get("eutail")):
        return m.end("street"), False
    if groups.get("city"):  # a city alone makes an address longer, not more likely
        return (
            m.end("street") if "\n" in text[m.end("street") : m.start("tail")] else m.end()
        ), False
    return m.end(), True


def _house_digits(m: re.Match) -> int:
    """The digits of the house number a street pattern matched, its longest run of digits
    (Hawaii's `98-1247`: 4; 0 for "One")."""
    number = re.search(r"[\w\-/]*\d[\w\-/]*", m.group("street"))
    return max(len(d) for d in re.findall(r"\d+", number.group())) if number else 0


def _whole_line(text: str, start: int, end: int) -> bool:
    """The span is a line of its own (a form's address line)."""
    before = text.rfind("\n", 0, start) + 1
    after = text.find("\n", end)
    return (
        not text[before:start].strip() and not text[end : len(text) if after < 0 else after].strip()
    )


def _longest(found: list[_Found]) -> list[_Found]:
    """Overlapping findings: the longest (then the best scored) wins."""
    kept: list[_Found] = []
    for f in sorted(found, key=lambda f: (-(f.end - f.start), -f.score)):
        if all(f.end <= k.start or f.start >= k.end for k in kept):
            kept.append(f)
    return sorted(kept, key=lambda f: f.start)


def split_address(value: str) -> tuple[str, str, str]:
    """(street line, separator, tail) of an address this module finds; tail "" when none."""
    for pattern in (
        _street_types()[1],
        _NAME_FIRST,
        _NUMBER_FIRST_FR,
        _TYPE_FIRST,
        _PO_BOX,
        _MILITARY,
    ):
        m = pattern.fullmatch(value)
        if m and m.group("tail"):
            street = m.group("street")
            return street, value[m.end("street") : m.start("tail")], m.group("tail")
        if m:
            return value, "", ""
    return value, "", ""


def address_style(value: str) -> str:
    """The Faker locale whose addresses look like this one."""
    street, _, tail = split_address(value)
    if _MILITARY.fullmatch(value) or _PO_BOX.fullmatch(value):
        return "po"
    if re.search(r"\b" + _CA_POSTCODE + r"\b", tail):
        return "en_CA"
    if re.search(r"\b" + _UK_POSTCODE + r"\b", tail):
        return "en_GB"
    if _NAME_FIRST.fullmatch(value):
        if re.search(r"straat|gracht|laan|plein|kade|singel|dijk|dreef", street, re.I):
            return "nl_NL"
        if re.match(r"(?:ul|al)\.", street):
            return "pl_PL"
        return "de_DE"
    if _NUMBER_FIRST_FR.fullmatch(value):
        return "fr_FR"
    if _TYPE_FIRST.fullmatch(value):
        if re.match(
            r"Via|Viale|Piazza|Piazzale|Corso|Largo|Vicolo|Strada|Contrada|Lung|Borgo", street
        ):
            return "it_IT"
        if re.match(r"Rua|Praça|Travessa|Alameda|Estrada|Rodovia", street):
            return "pt_PT"
        return "es_ES"
    return "en_US"


class StreetAddressRecognizer(FinderRecognizer):
    """Presidio recognizer for `find_addresses`."""

    def __init__(self) -> None:
        super().__init__("StreetAddressRecognizer", [ENTITY], find_addresses)
