"""Addresses as typed by hand: misspelt core street types (`typo_streets`), numbered US
routes and street grids (`route_grid_streets`).
"""

from __future__ import annotations

import re
from functools import cache

from screening.finders.address_forms import (
    address_line,
    house_digits,
    spellings,
    street_types,
    tail_end,
)
from screening.finders.address_grammar import (
    ADDRESS_WORDS,
    CORE_TYPES,
    DIRECTION_ANY,
    NAME_WORD,
    STOP,
    STREET,
    US_STATES,
    WITH_TAIL,
    YEAR,
    Found,
)
from screening.finders.address_towns import known_city

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
    known = {t.lower() for t in CORE_TYPES} | spellings(CORE_TYPES)
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
    units and tail (the parts of `street_types`' patterns); compiled once, run only on a text
    that holds a misspelling after a number."""
    number, after = street_types()[6]
    typos = "|".join(sorted(_typos(), key=len, reverse=True))
    return re.compile(
        rf"(?<![\w\-/.,])(?P<street>{number}(?:(?P<predir>{DIRECTION_ANY})[ \t]+)?"
        rf"(?P<name>{NAME_WORD}(?:[ \t]+{NAME_WORD}){{0,3}}?)[ \t]+(?i:{typos})\.?"
        r"(?![\w\-])" + after
    )


def typo_streets(text: str) -> list[Found]:
    """A house number, a name and a misspelt core street type (`2161 palm beach lakes boulevar
    suite 408`, `1800 Green Hills Pakway`): the line begins with the number, or a tail or an
    address word makes it an address."""
    typos = _typos()
    if not any(w.lower() in typos for run in _TYPO_WORDS.findall(text) for w in run.split()):
        return []
    found = []
    for m in _typo_pattern().finditer(text):
        words = m.group("name").split()
        if any(w.lower() in STOP for w in words) or house_digits(m) < 2:
            continue
        end, tail = tail_end(text, m)
        line_start = not text[text.rfind("\n", 0, m.start()) + 1 : m.start()].strip()
        context = ADDRESS_WORDS.search(text, max(0, m.start() - 40), m.start())
        if tail or line_start or context:
            found.append(Found(m.start(), end, WITH_TAIL if tail else STREET))
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
    tail (the parts of `street_types`' patterns)."""
    number, after = street_types()[6]
    return re.compile(
        rf"(?<![\w\-/.,])(?P<street>{number}(?:"
        rf"(?P<old>(?:Old|OLD|old)[ \t]+(?:(?:Number|NUMBER|No\.?|NO\.?)[ \t]+)?\d{{1,4}}[A-Za-z]?"
        rf"[ \t]+(?:Road|ROAD|Rd|RD|Highway|HIGHWAY|Hwy|HWY)\.?)|"
        rf"(?P<route>(?:us|US|U\.S\.|I)[ \t]+\d{{1,4}}[A-Za-z]?)|"
        rf"(?P<grid>{_GRID_DIRECTION}[ \t]+\d{{1,5}}(?P<post>[ \t]+{_GRID_DIRECTION})?)|"
        rf"(?P<packed>\d{{1,5}}[EW]))(?![\w\-])" + after
    )


def route_grid_streets(text: str) -> list[Found]:
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
        if house_digits(m) < 2:
            continue
        end, tail = tail_end(text, m)
        line_start = not text[text.rfind("\n", 0, m.start()) + 1 : m.start()].strip()
        unit = m.group("unit").strip()
        if not (
            line_start
            or tail
            or unit
            or ADDRESS_WORDS.search(text, max(0, m.start() - 40), m.start())
        ):
            continue
        if m.group("route"):
            line_end = address_line(text, m, m.group("route").split()[-1:])  # its number
            rest = text[m.end("route") : line_end or m.end()].split()
            if (
                line_end is None
                or YEAR.fullmatch(m.group("street").split()[0])
                or not (
                    not rest
                    or re.fullmatch(_GRID_DIRECTION, rest[0])
                    or rest[-1].upper() in US_STATES
                    or re.fullmatch(r"\d{5}(?:-\d{4})?", rest[-1])
                    or rest[-1].capitalize() in street_types()[0]
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
            town = line_start and city and known_city(text, m.start("city")) == m.end("city")
            if not (
                town or (m.group("post") and (len(m.group("grid").split()[1]) >= 3 or tail or unit))
            ):
                continue  # a grid's number of 3+ digits ("654 n 800 e"), or its tail, unit or
                # town: not "12 N 45 E" (coordinates)
        found.append(Found(m.start(), end, WITH_TAIL if tail else STREET))
    return found
