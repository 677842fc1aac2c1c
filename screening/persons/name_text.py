"""What the name rules read in a text: name words, handles, titles, greetings, sign-offs and
lists, the scores of a finding, and spaCy's tags and entities by offset (`PosLookup`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

from screening.persons import name_words as w
from screening.persons.faker_names import fold, strip_accents

ENTITY = "PERSON"
# Scores: the screen's PERSON rule keeps findings at 0.5 and above (screening.config).
FULL_NAME, IN_CONTEXT, LONE_NAME = 0.85, 0.7, 0.6

NAME_WORD = re.compile(r"[^\W\d_]+(?:['\u2019\-][^\W\d_]+)*")
MENTION = re.compile(r"(?<![\w.@])@([^\W\d_][\w'\u2019\-]*(?:\.[\w'\u2019\-]+)*)")
# A Reddit user, `u/name` or `/u/name` (3-20 letters, digits, `_`, `-`); tokenized text writes
# `u / name`.
REDDIT_USER = re.compile(r"(?<![\w/])/?u ?/ ?([^\W\d_][\w\-]{2,19})(?![\w/])")
EMAIL_LOCAL = re.compile(r"(?<![\w.@])([^\W\d_][\w'\u2019\-]*(?:[._][^\W\d_][\w'\u2019\-]*)+)@\w")
PARTS = re.compile(r"[._\-]")
# An e-mail's display name: `"TJO" <tj@example.com>`, `Maria Perez <mp@example.org>` (quoted, or
# the capitalised words right before the address in angle brackets).
DISPLAY_NAME = re.compile(
    r"(?:\"([^\"<>\n]{1,60})\"|((?:[^\W\d_][\w'\u2019.\-]*[ \t]+){0,3}[^\W\d_][\w'\u2019.\-]*))"
    r"[ \t]*<[^<>\s@]+@[^<>\s]+>"
)
# Initials before a capitalised surname: `V K Choudhry`, `J. R. Okafor` (one to three capitals,
# a dot optional; a bare `I` or `A` is a word, `:D` a smile, `M SUBS` capitals).
INITIALS = re.compile(
    r"(?<![\w.:;=])((?:[A-Z]\.[ \t]*|(?![AI]\b)[A-Z][ \t]+){1,3})([A-Z][^\W\d_A-Z]"
    r"[^\W\d_]*)(?![\w'])"
)
# A word of code rather than of a name: lower-case then capitals (`personId`), letters and digits
# run together (`queue2`, `3x`).
IDENTIFIER = re.compile(r"\b[a-z]+[A-Z]\w*|[^\W\d_]\d|\d[^\W\d_]")
_DASHES = "\u2013\u2014"


def _alternatives(items) -> str:
    return "|".join(re.escape(x.strip()) for x in items if x.strip())


_TITLES = _alternatives(w.TITLES.split())
_OFFICES = _alternatives(w.OFFICES.split())
TITLE = re.compile(r"\b(?:(?:" + _TITLES + r")\.?|(?:" + _OFFICES + r")\.)\s*$", re.IGNORECASE)
# A title or office with its dot, capitalised (`Dr.`, `Capt.`): what follows is a name even when
# it is an English word (`Dr. Strange`, `Capt. Hook`, `Col. Mustard`).
TITLE_WORDS = frozenset(w.TITLES.split())
OFFICE_WORDS = frozenset(w.OFFICES.split())
ADDRESSED = frozenset(w.ADDRESSED.split())
TITLE_DOT = re.compile(
    r"\b(?=[A-Z])(?:" + _TITLES + "|" + _OFFICES + r")\.[ \t]*$",
    re.IGNORECASE,
)
GREETING = re.compile(
    r"(?:^|[\s,.!>(])(?:good\s+)?(?:"
    + _alternatives(w.GREETINGS.split() + w.GREETINGS_ABROAD.split(","))
    + r")(?:\s+there)?\s*[,!:\-"
    + _DASHES
    + r"]?\s*$",
    re.IGNORECASE,
)
SIGN_OFF = re.compile(
    r"^\W*(?:(?:"
    + _alternatives(f"{w.SIGN_OFFS},{w.SIGN_OFFS_ABROAD}".split(","))
    + r")|--|[-"
    + _DASHES
    + r"])\W*$",
    re.IGNORECASE,
)
# Another language's greeting or sign-off of several words (`buenos días`, `mit freundlichen
# grüßen`): its words are no name.
SALUTATION_PHRASE = re.compile(
    r"(?<![^\W\d_])(?:" + _alternatives(w.SALUTATION_PHRASES) + r")(?![^\W\d_])", re.IGNORECASE
)
# "my name is vitoria", "call me tomomi": any word not known as English is taken for a name.
NAME_IS = re.compile(
    r"\b(?:my\s+name\s+is|my\s+name's|name\s+is|names\s+are|i'?m\s+called|"
    r"i\s+am\s+called|known\s+as)\s*[:,]?\s*$",
    re.IGNORECASE,
)
# "I'm tomomi", "this is Vsevolod", "call me vsevolod": a word a name list holds, or a word no
# list holds that is no English word and a proper noun or alone (`_unknown_in_context`).
INTRO = re.compile(
    r"\b(?:i'?m|i\s+am|this\s+is|it'?s|here\s+is|meet|call\s+me)\s*,?\s*$", re.IGNORECASE
)
LABEL = re.compile(r"^\s*(?:" + _alternatives(w.LABELS.split(",")) + r")\s*:\s*$", re.IGNORECASE)
LIST_SEPARATOR = re.compile(r"\s*(?:[,;/&+]|and|or|und|et|y|e)\s*")
MENTION_WORDS = frozenset({"here", "channel", "all", "everyone", "team", "room"})
STOP_POS = frozenset({"VERB", "AUX", "ADP", "DET", "PRON", "ADV", "ADJ", "CCONJ", "SCONJ", "PART"})


@dataclass(frozen=True)
class Token:
    start: int
    end: int  # possessive "'s" excluded
    text: str
    key: str
    possessive: bool = False


class PosLookup:
    """spaCy's part-of-speech tag of the token starting (or, `next_tag`, of the token after one
    ending) at a character offset, and its entities other than PERSON (lazy)."""

    def __init__(self, doc, entities=()) -> None:
        self._doc = doc
        self._entities = entities
        self._by_start: dict[int, str] | None = None

    def tag(self, start: int) -> str:
        if self._doc is None:
            return ""
        if self._by_start is None:
            self._by_start = {t.idx: t.pos_ for t in self._doc}
        return self._by_start.get(start, "")

    def next_tag(self, end: int) -> str:
        if self._doc is None:
            return ""
        after = [t for t in self._doc if t.idx >= end and not t.is_space]
        return after[0].pos_ if after else ""

    def other_entity(self, start: int) -> bool:
        """Inside an entity spaCy labels a place, organisation, product, work, event..."""
        return any(
            e.label_ in _OTHER_ENTITIES and e.start_char <= start < e.end_char
            for e in self._entities
        )


# spaCy's labels, and the names Presidio's NLP engine maps them to (GPE -> LOCATION...).
_OTHER_ENTITIES = frozenset(
    {
        "GPE",
        "LOC",
        "FAC",
        "LOCATION",
        "ORG",
        "ORGANIZATION",
        "NORP",
        "NRP",
        "PRODUCT",
        "EVENT",
        "WORK_OF_ART",
        "LANGUAGE",
        "LAW",
    }
)


def english_words(
    lookups,
    parts: tuple[str, ...] = ("noun", "verb", "adj", "adv"),
    also: Iterable[str] = (),
) -> Callable[[str], bool]:
    """Whether a word is an English word or an inflection of one, by spaCy's lemmatizer tables
    (WordNet's words of these parts of speech: nouns, verbs, adjectives, adverbs; their
    irregular forms; the suffix rules), the words `also` counted among them."""
    index = lookups.get_table("lemma_index", {})
    exceptions = lookups.get_table("lemma_exc", {})
    rules = lookups.get_table("lemma_rules", {})
    words: set[str] = set(also)
    for pos in parts:
        words.update(index.get(pos, ()))
        words.update(exceptions.get(pos, {}))
    suffixes = [(old, new) for pos in parts for old, new in rules.get(pos, ())]

    def english(word: str) -> bool:
        key = fold(word)
        return key in words or any(
            key.endswith(old) and key[: len(key) - len(old)] + new in words
            for old, new in suffixes
            if old
        )

    return english


def name_spellings(names: Iterable[str]) -> frozenset[str]:
    """Folded names of three letters or more, with and without accents."""
    keys = {fold(n) for n in names if len(n) > 2}
    return frozenset(keys | {strip_accents(k) for k in keys})


def word_key(word: re.Match) -> str:
    key = fold(word.group())
    return key[:-2] if key.endswith("'s") else key


def joins_names(gap: str) -> bool:
    return gap in (" ", "  ") or bool(re.fullmatch(r" ?[A-Z]\. ", gap))


def word_case(word: str) -> str:
    """`upper`, `lower`, `title`, `mixed` (`iPhone`) or `caseless` (a script without case:
    `王小明`, `محمد`)."""
    if not any(c.isupper() or c.islower() for c in word):
        return "caseless"
    if word.isupper():
        return "upper" if len(word) > 1 else "title"
    if word.islower():
        return "lower"
    return "title" if word[0].isupper() else "mixed"


def ends_name(text: str, end: int) -> bool:
    """A common word is a name in context only when nothing but punctuation follows it."""
    rest = text[end : end + 2]
    return not rest or rest[0] in ",.!?:;)\n" or rest.startswith("'s") or rest.startswith("\u2019s")


def in_code(text: str, tok: Token, hashtag: bool = False) -> bool:
    """Part of a path, an identifier, a URL or markup: a symbol of code right beside it (but a
    `#` before it, with `hashtag`)."""
    before = text[tok.start - 1 : tok.start]
    if hashtag and before == "#":
        before = ""
    after = text[tok.end : tok.end + 1]
    return bool(re.match(r"[/\\_=\[\]{}<>.:@#$`]", before) or re.match(r"[/\\_=\[\]{}<>(`]", after))


_PHRASE_WORDS = frozenset(word for phrase in w.SALUTATION_PHRASES for word in phrase.split())


def in_salutation(text: str, start: int) -> bool:
    """Whether the word at `start` is part of a greeting or sign-off of several words."""
    word = NAME_WORD.match(text, start)
    return bool(word and fold(word.group()) in _PHRASE_WORDS) and any(
        m.start() <= start < m.end()
        for m in SALUTATION_PHRASE.finditer(text, max(0, start - 40), start + 40)
    )


def mid_sentence(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    return bool(before) and before[-1] not in ".!?:\n\"'"


@cache
def _places() -> frozenset[str]:
    """Place names, casefolded: GeoNames' towns of 15,000 people or more (the address finder's
    gazetteer), the countries of Faker's English address provider and the US states."""
    from faker.providers.address.en_US import Provider as Address

    from screening.finders.address_grammar import US_STATE_NAMES
    from screening.finders.address_towns import town_names

    countries = {fold(c) for c in Address.countries}
    states = {fold(s) for s in US_STATE_NAMES.split("|")}
    return town_names() | countries | states


def is_place(key: str) -> bool:
    """Whether a word (its lookup key) is the name of a town, country or US state."""
    return key in _places()
