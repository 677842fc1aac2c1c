"""Street addresses: US, UK, Canadian and European formats, on one line or several.

`find_addresses` (the table's `StreetAddressRecognizer`) finds STREET_ADDRESS by anchored patterns (a house number, a street-type word,
a postcode), not by a parser: every pattern needs a house or box number AND a street-type word
(or a P.O. box / military address form), so prose numbers ("5 Main reasons", "Room 5", "Chapter
12 Street Fighter") are not addresses. The forms:

- house number first (US, UK, Canada, Ireland, Australia): `221B Baker Street`, `1600
  Pennsylvania Avenue NW`, `Flat 3, 12 High St`, with units (Apt, Suite, Unit, Floor, #) and an
  optional tail on the same line or the next: `City, ST 12345`, `City, QC H2X 1Y4`, `London NW1
  6XE`. Street types: the common ones (Street, St, Avenue, Road, Lane, Drive, Boulevard, and
  Australia's Circuit, Esplanade, Promenade...) score alone; the rest of Faker's en_US
  street-suffix list (Key, Light, Point, Union...) and of Australia's road types (Approach,
  Siding, Intersection...) only with a tail, a unit or an address word before ("address", "live
  at", "ship to"); none after a word that counts something else (`Round 5 Silverstone
  Circuit`, `Season 2 ...`: `NOT_HOUSE`) without one of those;
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
- Cyrillic and Greek script (`ул. Тверская, д. 7, кв. 15`, `Οδός Ερμού 25`, `Ερμού 25, 105 63
  Αθήνα`), and a flat or unit after a European number (`Hauptstraße 5, Whg. 3`, `ul. Długa 10
  m. 5`, `Kungsgatan 12 lgh 1102`): `screening.finders.address_scripts`;
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
  street_types.tsv`, rebuilt by `screening/data/build/update_street_types.py`; English words left
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
  `screening/data/build/update_cities.py`; English stop words, verbs and adjectives left out), after a
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

import re

from screening.finders.address_forms import (
    DIGIT,
    OTHER_FORMS,
    UK_POSTCODE_ANYWHERE,
    WORD_NUMBER,
    address_line,
    house_digits,
    street_types,
    tail_end,
)
from screening.finders.address_grammar import (
    ADDRESS_WORDS,
    AMBIGUOUS,
    CA_POSTCODE,
    ENTITY,
    MILITARY,
    NAME_FIRST,
    NUMBER_FIRST_FR,
    PO_BOX,
    QUANTITIES,
    STOP,
    STREET,
    TYPE_FIRST,
    UK_POSTCODE,
    WITH_TAIL,
    Found,
    http_status,
)
from screening.finders.address_lexicon import lexicon_streets, name_word, plain_types
from screening.finders.address_scripts import SCRIPT_FORMS, unit_after
from screening.finders.address_towns import (
    NOT_HOUSE,
    NUMBERED_LINES,
    ends_in_town,
    gazetteer_streets,
    known_city,
)
from screening.finders.address_typed import route_grid_streets, typo_streets
from screening.redact import Span


def find_addresses(text: str) -> list[Span]:
    """Street addresses in a text, scored (see the module doc)."""
    if not DIGIT.search(text):
        return _number_first(text) if WORD_NUMBER.search(text) else []
    found: list[Found] = []
    found += _number_first(text)
    found += lexicon_streets(text)
    found += gazetteer_streets(text)
    found += typo_streets(text)
    found += route_grid_streets(text)
    for pattern, hint in OTHER_FORMS:
        if hint is not None and not hint.search(text):
            continue
        for m in pattern.finditer(text):
            end, tail = tail_end(text, m)
            if m.groupdict().get("risky") and not tail:
                continue  # "Spring 2024", "Notepad 2": a -ring or -pad street needs its postcode
            found.append(Found(m.start(), end, WITH_TAIL if tail else STREET))
    for pattern, hint in SCRIPT_FORMS:
        if hint.search(text):
            for m in pattern.finditer(text):
                tail = bool(m.group("tail").strip(" ,"))
                found.append(Found(m.start(), m.end(), WITH_TAIL if tail else STREET))
    found = [Found(f.start, unit_after(text, f.end), f.score) for f in found]
    return [Span(f.start, _trim(text, f.start, f.end), ENTITY, f.score) for f in _longest(found)]


_WORD_BEFORE = re.compile(r"([^\W\d_]+)\.?[ \t]+$")
# Of `NOT_HOUSE`, the nouns that count something else; not `about`, `over`, `only`... (`How
# about 100 Greenwich Street?` is an address).
_COUNTING_NOUNS = NOT_HOUSE - {
    "about", "around", "best", "first", "floor", "gate", "last", "next", "no", "number", "only",
    "over", "room", "top", "under", "worst",
}  # fmt: skip


def _counted(text: str, start: int) -> bool:
    """The number after a noun that counts something else (`round`, `season`, `chapter`...)."""
    word = _WORD_BEFORE.search(text, max(0, start - 20), start)
    return bool(word) and word.group(1).casefold() in _COUNTING_NOUNS


def _trim(text: str, start: int, end: int) -> int:
    """A sentence's full stop is no part of an address ("Berlin."; "St." keeps its own)."""
    last = text[start:end].split()[-1]
    return end - 1 if last.endswith(".") and len(last) > 4 and "." not in last[:-1] else end


def _number_first(text: str) -> list[Found]:
    core, greedy, lazy, directional, uk_block, bare_line, _, uk_unit = street_types()
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
            if house_digits(m) < 2:
                continue  # "Windows 7 10 Street"? a house number has two digits at least
        route = m.group("route")
        words = name.split()
        lower = [w for w in words if w[0].islower()]
        end, tail = tail_end(text, m)
        unit = m.group("unit").strip()
        context = bool(ADDRESS_WORDS.search(text, max(0, m.start() - 40), m.start()))
        alone = _whole_line(text, m.start(), end)
        # "A Avenue", "I St": a one-letter name is no article or pronoun
        # an initial inside a name is no stop word: "100 GENERAL A S JOHNSON ST", "13011 T I BLVD"
        stops = [
            w
            for i, w in enumerate(words)
            if w.lower() in STOP and not (len(w) == 1 and w.isupper() and (i or len(words) == 1))
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
        plain = kind.lower() in plain_types() and house_digits(m) >= 2
        if lower and not (
            tail or context or unit or (alone and kind.capitalize() in core) or plain
        ):
            line_end = address_line(text, m, words)
            if line_end is None:
                continue  # "5 blocks down" is no street; "12 main road" needs a tail or context
            end = line_end  # the rest of its line is the address's too: "nw kennesaw"
        if http_status(m.group("street")):
            continue  # "502 Bad Gateway"
        if not (tail or context or unit) and _counted(text, m.start()):
            continue  # "Round 5 Silverstone Circuit", "Season 2 Ocean Drive": a count, no house
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
        elif kind.capitalize() in core or kind in core or (alone and house_digits(m) >= 2):
            score = STREET
        else:
            score = AMBIGUOUS
        found.append(Found(m.start(), end, score))
    if UK_POSTCODE_ANYWHERE.search(text):
        found += [Found(m.start(), m.end(), WITH_TAIL) for m in uk_block.finditer(text)]
    found += [Found(m.start("street"), m.end(), STREET) for m in uk_unit.finditer(text)]
    for m in bare_line.finditer(text):
        words = m.group("name").split()
        first = words[0].lower()
        # the name's second word a town GeoNames knows before a state: "1000 WOODLAWN Chicago IL"
        town = len(words) == 2 and m.group("city") and ends_in_town(text, m)
        if (
            m.group("wordnum")
            or {w.lower() for w in words} & STOP
            or first in QUANTITIES
            or first.rstrip("s") in QUANTITIES
            or (house_digits(m) < 3 and not _house_line(text, m, words))
            or (len(words) == 1 and words[0].islower() and words[0].endswith("s"))
            or (
                m.group("city") and "\n" not in text[m.end("street") : m.start("tail")] and not town
            )
            or http_status(m.group(0).strip())
        ):
            continue  # "30 minutes", "296 employees", "100 of them": a count, not a house
        end, tail = tail_end(text, m)
        if (
            tail
            and not re.search(r"[\d,\n]", text[m.start("tail") : end])
            and known_city(text, m.start("tail")) is None
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
        found.append(Found(m.start("street"), end, WITH_TAIL if tail else STREET))
    for m in directional.finditer(text):
        end, tail = tail_end(text, m)
        unit = m.group("unit").strip()
        if tail:
            score = WITH_TAIL
        elif unit or ADDRESS_WORDS.search(text, max(0, m.start() - 40), m.start()):
            score = STREET
        else:  # "1020 W BRYN MAWR", "1604 W. Farwell"; not "100 W Power Supply", "60 W LED"
            name, pre = m.group("name"), m.group("pre")
            marked = "." in pre or len(pre) > 2 or name.isupper() or name[0].isdigit()
            town = (
                m.group("city") and known_city(text, m.start("city")) == m.end("city")
            ) or ends_in_town(text, m)
            score = STREET if (house_digits(m) >= 3 or town) and marked else AMBIGUOUS
        found.append(Found(m.start(), end, score))
    return found


def _house_line(text: str, m: re.Match, words: list[str]) -> bool:
    """A line of its own that is a house number of 2 digits and a capitalised name with no unit
    or tail (`16 Tullamore`, `28 Lullwater`: a query or a form's field); not a numbered list's
    line (`12 Godfather` between other numbered lines), a plural count (`12 Monkeys`), a unit
    (`8 MiB`) or a section's heading of one digit (`3 Conclusion`)."""
    return (
        house_digits(m) == 2
        and not (m.group("unit").strip() or m.group("tail") or m.group("predir"))
        and all(name_word(w) and w[1:].islower() for w in words)
        and not words[-1].endswith("s")
        and not NUMBERED_LINES.search(text, max(0, m.start() - 200), m.start())
        and not re.match(r"[ \t]*\n[ \t]*\d", text[m.end() :])
    )


def _whole_line(text: str, start: int, end: int) -> bool:
    """The span is a line of its own (a form's address line)."""
    before = text.rfind("\n", 0, start) + 1
    after = text.find("\n", end)
    return (
        not text[before:start].strip() and not text[end : len(text) if after < 0 else after].strip()
    )


def _longest(found: list[Found]) -> list[Found]:
    """Overlapping findings: the longest (then the best scored) wins."""
    kept: list[Found] = []
    for f in sorted(found, key=lambda f: (-(f.end - f.start), -f.score)):
        if all(f.end <= k.start or f.start >= k.end for k in kept):
            kept.append(f)
    return sorted(kept, key=lambda f: f.start)


def split_address(value: str) -> tuple[str, str, str]:
    """(street line, separator, tail) of an address this module finds; tail "" when none."""
    for pattern in (
        street_types()[1],
        NAME_FIRST,
        NUMBER_FIRST_FR,
        TYPE_FIRST,
        PO_BOX,
        MILITARY,
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
    if MILITARY.fullmatch(value) or PO_BOX.fullmatch(value):
        return "po"
    if re.search(r"\b" + CA_POSTCODE + r"\b", tail):
        return "en_CA"
    if re.search(r"\b" + UK_POSTCODE + r"\b", tail):
        return "en_GB"
    if NAME_FIRST.fullmatch(value):
        if re.search(r"straat|gracht|laan|plein|kade|singel|dijk|dreef", street, re.I):
            return "nl_NL"
        if re.match(r"(?:ul|al)\.", street):
            return "pl_PL"
        return "de_DE"
    if NUMBER_FIRST_FR.fullmatch(value):
        return "fr_FR"
    if TYPE_FIRST.fullmatch(value):
        if re.match(
            r"Via|Viale|Piazza|Piazzale|Corso|Largo|Vicolo|Strada|Contrada|Lung|Borgo", street
        ):
            return "it_IT"
        if re.match(r"Rua|Praça|Travessa|Alameda|Estrada|Rodovia", street):
            return "pt_PT"
        return "es_ES"
    return "en_US"
