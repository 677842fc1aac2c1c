"""Streets with no street word, kept when a known town follows (GeoNames' towns,
`data/cities.txt.gz`): `gazetteer_streets`.
"""

from __future__ import annotations

import gzip
import re
from functools import cache
from pathlib import Path

from screening.finders.address_grammar import (
    CAP,
    EU_POSTCODE,
    QUANTITIES,
    STOP,
    STREET,
    WORDS,
    YEAR,
    Found,
    capitalised,
    http_status,
)

# Towns of 15,000 people or more, GeoNames' (screening/data/cities.txt.gz, rebuilt by
# screening/data/build/update_cities.py; English words left out there): a street with no street word
# is an address when such a town follows it (`Korunní 810, Praha`).
_CITIES_PATH = Path(__file__).resolve().parents[1] / "data" / "cities.txt.gz"
_CITY_WORD = re.compile(r"[^\W\d_][\w'\u2019.\-]*")
_SPACES = re.compile(r"[ \t]+")
_LINE_END = re.compile(r"[ \t]*(?:$|\n)")
# the line before begins with a number: a numbered list's
NUMBERED_LINES = re.compile(r"(?:^|\n)[ \t]*\d[^\n]*\n[ \t]*\Z")
# after a street: a comma or a line break, then a postcode if any ("Epleskogen 39A, 0371 Oslo")
_BEFORE_CITY = re.compile(rf"[ \t]*(?:,[ \t]*(?:\n[ \t]*)?|\n[ \t]*)(?:{EU_POSTCODE},?[ \t]+)?")
# A house number, then a capitalised name with no street word ("16 Tullamore", "16 The
# Stables"): an address with a known town after it.
_NUMBER_NAME = re.compile(
    rf"(?<![\w\-/.,$\u00a3\u20ac#])(?P<number>\d{{1,5}}[A-Za-z]?)[ \t]+"
    rf"(?P<name>(?:The[ \t]+)?{CAP}(?:[ \t]+{CAP}){{0,2}})(?=[ \t]*(?:[,\n]|$))"
)


# what ends an address's town: its line, a comma, a full stop, a postcode, district or state
# ("Praha 2", "Chicago IL"); not a sentence going on ("Fallout 4, Boston was great")
_AFTER_CITY = re.compile(r"[ \t]*(?:$|\n|[,;)]|\.(?!\w)|\d|[A-Z]{2}(?![\w\-]))")


# Words right before a number that make it a part, a rank or a count, not a house number after
# a street's name ("Season 3, Paris", "Chapter 12, London", "Top 5, Chicago")
NOT_HOUSE = frozenset(WORDS["NOT_HOUSE"])


_BEFORE_HOUSE = frozenset(["at", "to", "is", "on", "from", "in"])  # "I live at 16 Tullamore, ..."


@cache
def town_names() -> frozenset[str]:
    with gzip.open(_CITIES_PATH, "rt", encoding="utf-8") as f:
        return frozenset(line.rstrip("\n") for line in f if not line.startswith("#"))


def known_city(text: str, at: int) -> int | None:
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
    cities = town_names()
    for n in range(len(words), 0, -1):
        name = " ".join(w.group() for w in words[:n]).rstrip(".")
        end = words[0].start() + len(name)
        if name.casefold() in cities and _AFTER_CITY.match(text, end):
            return end
    return None


def city_after(text: str, end: int, spaced: bool = False) -> int | None:
    """The end of a known town after a street that ends at `end`, past a comma or a line break
    and a postcode (`, Praha`; `0371 Oslo` on the next line), or (`spaced`) past spaces when the
    town ends its line (`Epleskogen 39A Oslo`, a query); else None."""
    sep = _BEFORE_CITY.match(text, end)
    if sep:
        return known_city(text, sep.end())
    sep = _SPACES.match(text, end) if spaced else None
    town = known_city(text, sep.end()) if sep else None
    return town if town is not None and _LINE_END.match(text, town) else None


def ends_in_town(text: str, m: re.Match) -> bool:
    """The last word or words of a street pattern's name are a town GeoNames knows, the name's
    end an address's (`1000 WOODLAWN Chicago IL`, `4420 N. Bryn Mawr Chicago`)."""
    name = m.group("name")
    at = [w.start() for w in re.finditer(r"(?<![^ \t])\S", name)][1:]
    return any(known_city(text, m.start("name") + i) == m.end("name") for i in at)


def gazetteer_streets(text: str) -> list[Found]:
    """A house number and a capitalised name with no street word, then a comma or a line break
    and a town GeoNames knows (`16 Tullamore, Galway`, `16 The Stables, Dublin`), or `The` and a
    name on a line of their own (`16 The Stables`)."""
    found = []
    for m in _NUMBER_NAME.finditer(text):
        number, words = m.group("number"), m.group("name").split()
        before = text[text.rfind("\n", 0, m.start()) + 1 : m.start()].split()
        if (
            YEAR.fullmatch(number)
            or http_status(m.group())
            or (before and before[-1][-1].isalnum() and before[-1].casefold() not in _BEFORE_HOUSE)
        ):
            continue  # the number begins its line or follows punctuation or "at", "to", "is"...:
            # not "Top 5 Bars, Chicago", "Windows 10 Pro, Berlin", "in 2019 Paris, London"
        if (
            any(
                w.casefold() in STOP - {"the"} or w.casefold().rstrip("s") in QUANTITIES
                for w in words
            )
            or not capitalised(words[-1])
            or words == ["The"]
        ):
            continue  # "5 Things to do, Paris"
        end = city_after(text, m.end())
        if (
            end is None
            and words[0] == "The"
            and not before
            and _LINE_END.match(text, m.end())
            and not NUMBERED_LINES.search(text, max(0, m.start() - 200), m.start())
            and not re.match(r"[ \t]*\n[ \t]*\d", text[m.end() :])
        ):
            end = m.end()  # a line of its own, a house's number and name: "16 The Stables"; not
            # a numbered list's line ("1 The Godfather" between other numbered lines)
        if end is not None:
            found.append(Found(m.start(), end, STREET))
    return found
