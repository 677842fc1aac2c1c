"""A surname or a given name standing alone, where the whole name was found in the same record.

Writers name a person in full once and by one part after (`Hedy Lamarr married Fritz Mandl ...
Lamarr accompanied Mandl to meetings`); the readers find the full name and miss the part alone
(a surname no list holds, a word no tag marks). `name_parts` takes each word of a name found
with two or more words and finds it again, as a whole word written the same way, where no finding
covers it: a coreference of the simplest kind, as a reviewer would read the text. Nothing comes
of a finding that is a place as a whole (`Hong Kong`).

A part is not taken alone when it is a title or greeting (`Dr`, `Dear`), a particle (`de`,
`van`), a product, a place (`Washington` of `George Washington` is a city too), an English or
common word no name list holds (`Minister`, `News`, `Direct`: the words of false findings,
`Prime Minister Allawi`, `BBC Breaking News`, `Direct Dial`), shorter than three letters, or in
capitals or lower case (`BUSH`, `bush`: the part must be written as a name is, a capital then
lower case). A given name that is an English or common word (`Will`, `Rose`) is taken only inside
a sentence (`Will you` opens one; a surname, `Baker was late`, may open one), and no part beside
a symbol of code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from screening.persons import name_words as w
from screening.persons.faker_names import PARTICLES, fold
from screening.persons.name_text import (
    ENTITY,
    NAME_WORD,
    OFFICE_WORDS,
    TITLE_WORDS,
    Token,
    in_code,
    is_place,
    mid_sentence,
    word_key,
)
from screening.redact import Span

_NOT_PARTS = TITLE_WORDS | OFFICE_WORDS | frozenset(w.GREETINGS.split())
MIN_PART = 3


class _Words(Protocol):  # what the name recognizer knows of words (`PersonNameRecognizer`)
    def is_name(self, key: str) -> bool: ...

    def is_product(self, key: str) -> bool: ...

    def is_plain(self, key: str) -> bool: ...


def name_parts(
    words: _Words,
    text: str,
    spans: Sequence[Span],
    elsewhere: Sequence[tuple[str, Sequence[Span]]] = (),
) -> list[Span]:
    """Findings for the parts of `text`'s multi-word PERSON findings where they stand alone,
    each scored as the name it came from (its highest score where several hold it); with
    `elsewhere` (other texts of the same record and their findings), the parts of their names
    too (a QA question's `Lamarr` after its context's `Hedy Lamarr`)."""
    parts: dict[str, float] = {}
    surnames: set[str] = set()
    for source, found_there in ((text, spans), *elsewhere):
        _collect(words, source, found_there, parts, surnames)
    if not parts:
        return []
    covered = [(s.start, s.end) for s in spans]
    out = []
    for part, score in parts.items():
        # an English given name opens a sentence as the word does (`Will you`); a surname opens
        # one as the person (`Baker was late`)
        plain = words.is_plain(part.lower()) and part not in surnames
        for match in re.finditer(r"(?<![\w@#'\u2019.-])" + re.escape(part) + r"(?![\w@-])", text):
            start, end = match.span()
            if any(s < end and start < e for s, e in covered):
                continue
            if plain and not mid_sentence(text, start):
                continue  # `Will you`, `Rose early`: an English word opening its sentence
            if in_code(text, Token(start, end, part, part.lower())):
                continue
            out.append(Span(start, end, ENTITY, score))
    return out


def _collect(
    words: _Words, text: str, spans: Sequence[Span], parts: dict[str, float], surnames: set[str]
) -> None:
    for span in spans:
        if span.entity != ENTITY:
            continue
        found = list(NAME_WORD.finditer(text, span.start, span.end))
        if len(found) < 2 or is_place(fold(text[span.start : span.end])):
            continue  # one word, or a place read as a person (`Hong Kong`)
        for word in found:
            part = word.group()
            if _may_stand_alone(words, part, word_key(word)):
                parts[part] = max(parts.get(part, 0.0), span.score)
        surnames.add(found[-1].group())


def _may_stand_alone(words: _Words, part: str, key: str) -> bool:
    return (
        len(part) >= MIN_PART
        and part[0].isupper()
        and not part[1:].isupper()
        and key not in _NOT_PARTS
        and key not in PARTICLES
        and not words.is_product(key)
        and not is_place(key)
        and (words.is_name(key) or not words.is_plain(key))
    )
