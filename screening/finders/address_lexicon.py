"""Streets by libpostal's street types of many languages (`data/street_types.tsv`): a word of
the lexicon, a name and a house number (`lexicon_streets`).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from screening.finders.address_forms import lexicon_rows, spellings
from screening.finders.address_grammar import (
    EU_TAIL,
    PLAIN_TYPES,
    QUANTITIES,
    SEP,
    STOP,
    STREET,
    WITH_TAIL,
    WORDS,
    YEAR,
    Found,
    capitalised,
)
from screening.finders.address_towns import NOT_HOUSE, city_after

# A word, then a house number on the same line: the candidates of the lexicon's street forms.
_NUMBER_AFTER_WORD = re.compile(  # a separator first: the regex engine scans for it fast
    r"[ \t,](?<=[^\W\d_][ \t,])(?:(?<=,)[ \t]+|(?<=[ \t])[ \t]*)"
    r"(?:(?:Nr|nr|NR)\.?[ \t]*)?"  # Romanian, German, Polish: `Drumul Ardelean Nr. 99`
    r"(?P<number>\d{1,4}(?:[ ]?[a-zA-Z](?![\w\-]))?(?:[ ]?[-/][ ]?\d{1,4}[a-zA-Z]?)?)"
    r"(?![\w\-%\u00b0]|[.,:]\d)"
)
_LAST_WORD = re.compile(r"[^\W\d_][\w'\u2019\-]*$")
_NAME_TOKEN = re.compile(r"[^\W\d_][\w'\u2019\-]*")
_TOKEN = re.compile(r"\S+")
_LEXICON_TAIL = re.compile(rf"{SEP}(?P<tail>{EU_TAIL})")
# Kinds of place a Brazilian street's name opens with that libpostal's Portuguese list lacks
# (the Correios' types of logradouro: `Ladeira de Silveira, 4`, `Conjunto de Pires, 31`);
# not those that are ordinary words too (`Área`, `Lago`, `Feira`, `Jardim`, `Estação`).
BRAZIL_TYPES = frozenset(
    {"ladeira", "conjunto", "núcleo", "esplanada", "condomínio", "colônia", "favela", "quadra"}
    | {"setor", "residencial", "loteamento", "viela", "vereda", "chácara", "recanto", "morro"}
)
# The little words inside a street's name after its type: "Rua do Sol a Santa Catarina", "Carrer
# de la Pau", "Ulica pod Lipami"
_NAME_PARTICLES = frozenset(WORDS["_NAME_PARTICLES"])


@cache
def plain_types() -> frozenset[str]:
    return PLAIN_TYPES | spellings(PLAIN_TYPES)


@cache
def _lexicon() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(street words written apart, compound endings, English words ending in one)."""
    kinds: dict[str, set[str]] = {"word": set(BRAZIL_TYPES), "suffix": set(), "english": set()}
    for form, how, _ in lexicon_rows():
        kinds.get(how, set()).add(form)  # "spelling" rows: `spellings`
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


def name_word(word: str) -> bool:
    """A word of a street's name in a sentence: capitalised, no stop word."""
    return capitalised(word) and word.casefold() not in STOP


def _name_word_alone(word: str) -> bool:
    """A word of a street's name on a line of its own (a query, a form's field): in lower case
    too."""
    return (capitalised(word) or word.islower()) and word.casefold() not in STOP


def lexicon_streets(text: str) -> list[Found]:
    """A street name and a house number with nothing else, by the street-type words of many
    languages (libpostal's): a compound ending in one (`Skredderplassen 20`, `Gamla
    Varmdovagen 6`), a capitalised name before one (`Brīvības iela 5`,
    `Henrik Walters plass 3`, `Atatürk Caddesi 5`) or after one (`Rua Augusta 5`, `náměstí Míru
    5`, `Drumul Ardelean Nr. 99`: `Nr.` may come before the number), then a postcode and city
    if any. Names in lower case only on a line of their own (a
    query or a form's field: `skredderplassen 20`)."""
    words, _, _ = _lexicon()
    found = []
    for m in _NUMBER_AFTER_WORD.finditer(text):
        if YEAR.fullmatch(m.group("number")):
            continue  # "Gran Vía 2024": a year
        token = text[max(0, m.start() - 40) : m.start()].rsplit(None, 1)[-1]
        w = _LAST_WORD.search(token)
        if w is None:
            continue
        last, first = w.group(), m.start() - len(token) + w.start()
        key = last.casefold()
        if key in STOP or key.rstrip("s") in QUANTITIES:
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
        name = _name_word_alone if alone else name_word
        start = None
        if name(last) and _compound(last):
            start = first
            for at, word in names[: 5 if alone else 2]:
                if not name(word):
                    break
                start = at
        elif (last.islower() or capitalised(last)) and key in words and names and name(names[0][1]):
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
        if start is None and name_word(last) and not last.isupper() and key not in NOT_HOUSE:
            # no street word, but a town GeoNames knows after a comma or a line break:
            # "Korunní 810, Praha", "Broadway 24, Manhattan"
            # the town after spaces only on a query's line, a house number of 2 digits or with
            # its letter ("Epleskogen 39A Oslo"; not "Fallout 4 Boston")
            spaced = offset == line_start and not re.fullmatch(r"\d", m.group("number"))
            city = city_after(text, m.end(), spaced=spaced)
            if city is None and alone and re.fullmatch(r"\d{1,4}[ ]?[a-zA-Z]", m.group("number")):
                city = end  # a query of a name and a house number with its letter: "Epleskogen 39A"
            if city is not None:
                start, end = first, max(end, city)
                for at, word in names[:2]:
                    if not name_word(word):
                        break
                    start = at
        if start is not None:
            found.append(Found(start, end, WITH_TAIL if tail else STREET))
    return found


def _lexicon_tail(text: str, end: int) -> tuple[int, bool]:
    """Where a street found by `lexicon_streets` ends with its postcode and city (True) or its
    city alone on the same line (False)."""
    t = _LEXICON_TAIL.match(text, end)
    if t and not t.group("city"):
        return t.end(), True
    if t and "\n" not in text[end : t.start("tail")]:
        return t.end(), False
    return end, False
