"""The patterns a street address is found by: house number first with the street types of
every style and their libpostal spellings (`street_types`), the other forms, each with its
cheap search (`OTHER_FORMS`), and what a house-number-first match measures (its house
number's digits, its tail, a lower-case street's line).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from screening.finders.address_grammar import (
    BARE_UNITS,
    CAP,
    CITY_UK,
    COMPOUND,
    CORE_TYPES,
    DIRECTION,
    DIRECTION_ANY,
    EXTRA_TYPES,
    GRID_LATAM,
    MILITARY,
    NAME_FIRST,
    NAME_NUMBER_POSTCODE,
    NAME_WORD,
    NUMBER_FIRST_FR,
    ORDINAL,
    PO_BOX,
    QUANTITIES,
    ROMANCE_PARTICLE,
    ROUTE_TYPES,
    STOP,
    TAIL_US_CA_UK,
    TYPE_FIRST,
    UK_POSTCODE,
    UNIT_WORDS,
    WORD_NUMBERS,
    cases,
)


@cache
def street_types() -> tuple[
    frozenset[str],
    re.Pattern,
    re.Pattern,
    re.Pattern,
    re.Pattern,
    re.Pattern,
    tuple[str, str],
    re.Pattern,
]:
    """(core types, the pattern of a house-number-first street line with all types, the same
    preferring the first street-type word to the last, the pattern of a street without a type
    word after a direction: `110 W Hubbard`, `6641 N 2200 W`, a UK address block ending in its
    postcode, a line that is a house number and a few words and nothing else, and the house
    number's and the units' and tail's parts of these patterns, for `_typo_pattern`; and a UK
    flat's line with its street on the next line and nothing after them)."""
    from faker.providers.address.en_US import Provider

    # a type's other spellings in libpostal's English dictionary count as the type ("29th Strt",
    # "harbour blvrd", "Eisenhower Pkway")
    core = frozenset(CORE_TYPES) | {s.capitalize() for s in spellings(CORE_TYPES)}
    every = cases(sorted(core | set(Provider.street_suffixes) | set(EXTRA_TYPES)))
    bare = "|".join(sorted({v for w in BARE_UNITS for v in (w, w.upper())}, key=len, reverse=True))
    unit = (
        rf"(?:#[ \t]?)?(?:{cases(UNIT_WORDS)})\.?[ \t]*#?[ \t]*(?:(?:No|NO|no|Nº)\.?[ \t]*)?"
        rf"(?:[A-Za-z]{{0,2}}-?\d{{1,6}}(?:-\d{{1,4}})?[A-Za-z]{{0,3}}|[A-Z]{{1,2}}|[a-z])(?![\w\-])|"
        rf"#[ \t]?(?:[A-Za-z]{{1,2}}\d{{0,6}}|\d{{1,6}}(?:-\d{{1,6}})?)[A-Za-z]?(?![\w\-])|"
        rf"(?:No|NO|no)\.?[ \t]*\d{{1,6}}[A-Za-z]?(?![\w\-])|"
        rf"{ORDINAL}[ \t]+(?:{cases(['Floor', 'Fl', 'Flr'])})\b\.?|(?:{bare})(?![\w\-])"
    )
    # a house number; a unit before it (`104-18663`, `108 - 1550`; `718 - 8th Avenue`)
    number = (
        rf"(?:(?:\d{{1,6}}[A-Za-z]?(?:/\d{{1,4}}[A-Za-z]?|[ ]?-[ ]?\d{{1,6}}[A-Za-z]?|-[A-Z](?!\w)"
        rf"|[ ]?½|[ ]1/2|[ ]?-(?=[ \t]+{ORDINAL}[ \t])|(?P<sletter>[ ][A-H](?=[ \t]+[A-Z])))?"
        rf"|[NSEWnsew]\d{{1,4}}[ ]?[NSEWnsew]\d{{1,5}})"
        rf"|(?P<wordnum>{WORD_NUMBERS}))[ \t]+"
    )
    route = (
        rf"(?P<route>(?:(?:{ROUTE_TYPES})\.?[ \t]*#?\d{{1,5}}[A-Za-z]?|"
        rf"(?:County Road|COUNTY ROAD|CO RD|Co Rd|CR)[ \t]+[A-Z]{{1,3}})(?![\w\-])"
        rf"(?:[ \t]+(?:Business|BUSINESS|Bus\.|Spur|Loop|Bypass)(?![\w\-]))?)"
    )
    after = (
        # a direction after the street; in lower case only before a unit: "830 3rd st s # 105"
        rf"(?:[ \t]*,?[ \t]*(?:{DIRECTION}|(?:n|s|e|w|ne|nw|se|sw|north|south|east|west)\.?"
        rf"(?=[ \t]*,?[ \t]*(?:{unit})))"
        rf"(?![\w\-]))?"
        rf"(?P<unit>(?:[ \t]*,?[ \t]*(?:{unit}))*"
        # a unit number with no unit word, ending the street's line: "Broadway Street 10"
        rf"(?:[ \t]+\d{{1,4}}[A-Za-z]?(?:-\d{{1,4}})?(?:[ \t]+[NSEW])?(?=[ \t]*(?:$|\n|,)))?"
        # the route a street is, in parentheses: "62 Portland Road (Route 1)"
        rf"(?:[ \t]+\((?:Route|Rte|Hwy|Highway|US|SR)[ \t]*\d{{1,4}}\))?"
        # a building's name after the street, before a comma: "150 I St SE The Garrett, ..."
        rf"(?:[ \t]+(?:The|THE)[ \t]+{CAP}(?:[ \t]+{CAP})?(?=[ \t]*,)"
        rf"(?:[ \t]*,[ \t]*(?:{unit}))*)?))"
        rf"(?:{TAIL_US_CA_UK})?"
    )
    numbered_unit = (
        rf"(?:{cases(['Apt', 'Apartment', 'Suite', 'Ste', 'Unit', 'Lot', 'Trlr'])})\.?[ \t]*#?[ \t]*"
        rf"(?:[A-Za-z]?-?\d|[A-Z](?![\w\-]))"
    )
    # a unit before an Australian house number: "Unit 12/345", "U12/345", "Lot 12/345"
    slash_unit = (
        rf"(?=[AaFfLlSsUu])(?:{cases(['Unit', 'Apt', 'Apartment', 'Lot', 'Flat', 'Suite', 'Shop', 'U'])})"
        rf"\.?[ \t]*(?=\d{{1,4}}[A-Za-z]?/\d)"
    )
    numbered = (
        rf"(?:{cases(['Street', 'St', 'Avenue', 'Ave', 'Place', 'Pl', 'Terrace', 'Court'])})\.?"
    )
    front = cases(
        ["Camino", "Calle", "Avenida", "Alameda", "Paseo", "Corte", "Ave", "Avenue", "Av"]
    )
    patterns = []
    for lazy in ("", "?"):
        patterns.append(
            re.compile(
                rf"(?<![\w\-/.,])(?P<street>(?:(?:{unit})\s*,?\s+|{slash_unit})?{number}"
                rf"(?:(?P<predir>{DIRECTION_ANY})[ \t]+)?"
                rf"(?:(?P<rname>{NAME_WORD}(?:[ \t]+{NAME_WORD}){{0,2}}?[ \t]+)??{route}|"
                rf"(?P<name>{NAME_WORD}(?:[ \t]+(?:{NAME_WORD}|and|AND|&)){{0,3}}{lazy})[ \t]+"
                rf"(?P<type>(?:{every})\.?)(?![\w\-])|(?P<bare>Broadway|BROADWAY)(?![\w\-])|"
                # a numbered street or avenue without its ordinal: "18663 52 AVE", "13009 239b St."
                rf"(?P<numname>\d{{1,3}}[A-Za-z]?[ \t]+{numbered})(?![\w\-])|"
                # a European street word ending the name, number first: "1 Hämeenkatu"
                rf"(?P<compound>{CAP}(?:{COMPOUND}))(?![\w\-])|"
                # no street word, but a unit after: "4004 OCEAN FRONT APT 410"
                rf"(?P<uname>{CAP}(?:[ \t]+{CAP}){{0,2}})(?=[ \t]*,?[ \t]+(?:{numbered_unit}))|"
                rf"(?P<front>{front})\.?[ \t]+(?:{ROMANCE_PARTICLE}[ \t]+|of[ \t]+|the[ \t]+)*"
                rf"(?P<fname>{NAME_WORD}(?:[ \t]+{NAME_WORD}){{0,2}}?)(?![\w\-]))" + after
            )
        )
    directional = re.compile(
        rf"(?<![\w\-/.,])(?P<street>\d{{1,6}}[A-Za-z]?[ \t]+"
        rf"(?P<pre>[NS]\.?[EW]\.?|[NSEW]\.?|North|South|East|West|NORTH|SOUTH|EAST|WEST)[ \t]+"
        r"(?!(?:Dakota|Carolina|Virginia|Korea|America|Africa|Pole|Sea|Side|Coast|End)\b)"
        rf"(?P<name>\d{{1,5}}[ \t]+(?:[NSEW](?![\w\-])\.?|North|South|East|West|NORTH|SOUTH|EAST|"
        rf"WEST)|{ORDINAL}|"
        rf"(?!(?:{every})\b){CAP}(?:[ \t]+(?!(?:{every})\b){CAP})?)(?![\w\-])" + after
    )
    # A UK address block without a house number: unit, street, town, postcode on their lines.
    uk_block = re.compile(
        rf"(?<![\w\-])(?P<street>"
        # a building's name or a PO box before the street, first on its line or after a comma:
        # "Guildhall, Gresham Street", "PO Box 111, Peveril Buildings, Peveril Square"
        rf"(?:(?:(?<![^\n])|(?<=,[ ]))(?:(?:P\.?O\.?[ ]Box[ \t]+\d{{1,6}}|{CAP}(?:[ \t]+{CAP}){{0,2}})"
        rf"[ \t]*,[ \t]*){{1,2}})?"
        rf"(?:(?:{cases(['Flat', 'Studio', 'Apartment', 'Unit'])})[ \t]+"
        rf"\d{{1,4}}[A-Za-z]?[ \t]*(?:,[ \t]*|\n[ \t]*))?{CAP}(?:[ \t]+{CAP}){{0,3}}?[ \t]+"
        rf"(?:{every}))[ \t]*(?:,[ \t]*|\n[ \t]*)"
        # the town, and a county or island: "Douglas, Isle of Man IM99 1JJ"
        rf"(?P<tail>{CITY_UK}(?:[ \t]*,[ \t]*{CITY_UK})?(?:[ \t]*,[ \t]*|[ \t]*\n[ \t]*|[ \t]+)"
        rf"{UK_POSTCODE})\b"
    )
    # A line that is an address line and nothing else, with no street word: "5429 woodlawn
    # chicago", "333 Nroth Michigan", "3901 south state steet 1st floor" (a form's or a table's
    # address field); the words are checked in `_number_first`.
    bare_line = re.compile(
        rf"^[ \t]*(?P<street>{number}(?:(?P<predir>{DIRECTION_ANY})[ \t]+)?"
        rf"(?P<name>{NAME_WORD}(?:[ \t]+{NAME_WORD})?)(?![\w\-])" + after + r"[ \t]*$",
        re.MULTILINE,
    )
    # A UK flat and its street on the next line, with no house number and nothing after them
    # (`Flat 3` / `Mason Motorway`; `Studio 2, Douglas Brooks`): the unit line opens it.
    uk_unit = re.compile(
        rf"(?<![^\n])[ \t]*(?P<street>(?:{cases(['Flat', 'Studio', 'Apartment'])})[ \t]+"
        rf"\d{{1,4}}[A-Za-z]?[ \t]*(?:,[ \t]*|\n[ \t]*){CAP}(?:[ \t]+{CAP}){{0,3}}?[ \t]+"
        rf"(?:{every}))(?=[ \t]*(?:[,.]|\n|$))"
    )
    return (
        core,
        patterns[0],
        patterns[1],
        directional,
        uk_block,
        bare_line,
        (number, after),
        uk_unit,
    )


DIGIT = re.compile(r"\d")
WORD_NUMBER = re.compile(rf"\b(?:{WORD_NUMBERS})[ \t]+[A-Z]")
UK_POSTCODE_ANYWHERE = re.compile(rf"\b{UK_POSTCODE}\b")
# The other forms, each with a cheap search that must find something before the pattern runs.
OTHER_FORMS = (
    (NAME_FIRST, None),
    (NUMBER_FIRST_FR, None),
    (TYPE_FIRST, None),
    (
        PO_BOX,
        re.compile(r"(?i:box|bx|postfach|postbus|apartado|apdo|casella|caixa|postale|bag)|B\.?P\b"),
    ),
    (MILITARY, re.compile(r"\b[ADF]PO\b")),
    (GRID_LATAM, re.compile(r"\d[ \t]?[A-Z]?[ \t]*(?:#|No|N°|Nº|nº)")),
    (NAME_NUMBER_POSTCODE, re.compile(r"\d[a-zA-Z]?[ \t]*[,\n][ \t]*\d{2}")),
)

# Street types of many languages, from libpostal's dictionaries (screening/data/street_types.tsv,
# rebuilt by screening/data/build/update_street_types.py; English words left out there).
_LEXICON_PATH = Path(__file__).resolve().parents[1] / "data" / "street_types.tsv"


@cache
def lexicon_rows() -> tuple[tuple[str, str, str], ...]:
    return tuple(
        tuple(line.split("\t"))
        for line in _LEXICON_PATH.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    )


def spellings(types: Iterable[str]) -> frozenset[str]:
    """libpostal's other spellings of these English street types, in lower case."""
    wanted = {t.lower() for t in types}
    return frozenset(f for f, how, of in lexicon_rows() if how == "spelling" and of in wanted)


def address_line(text: str, m: re.Match, words: list[str]) -> int | None:
    """The end of the line of a lower-case street that begins its line with a house number of
    3 digits or more, when the line holds nothing else but a few words with no stop word or
    count (a direction, a building, a unit, a city: "3991 royal drive nw kennesaw", "3340
    peachtree road, tower place ste 1685"; not "2000 cars drive past the school"); else None."""
    if house_digits(m) < 3 or text[text.rfind("\n", 0, m.start()) + 1 : m.start()].strip():
        return None
    line_end = text.find("\n", m.end("street"))
    line_end = len(text) if line_end < 0 else line_end
    rest = re.findall(r"[^\W\d_]+", text[m.end("street") : line_end])
    if (
        len(rest) > 5
        or words[0].lower().endswith("s")  # "2000 cars drive": a count of things
        or any(w.lower() in STOP or w.lower().rstrip("s") in QUANTITIES for w in words + rest)
    ):
        return None
    return len(text[:line_end].rstrip())


def tail_end(text: str, m: re.Match) -> tuple[int, bool]:
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


def house_digits(m: re.Match) -> int:
    """The digits of the house number a street pattern matched, its longest run of digits
    (Hawaii's `98-1247`: 4; 0 for "One")."""
    number = re.search(r"[\w\-/]*\d[\w\-/]*", m.group("street"))
    return max(len(d) for d in re.findall(r"\d+", number.group())) if number else 0
