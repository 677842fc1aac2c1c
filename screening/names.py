"""Person names by list and context, beside spaCy's PERSON.

spaCy's small English pipeline misses names in sign-offs, greetings, lower case, lists and
possessives, and takes some products for people (Kafka, Zendesk, Oracle). `PersonNameRecognizer`
takes over PERSON from Presidio's spaCy recognizer: it keeps spaCy's PERSON spans (minus those
that are only product names or a verb such as "Mark it done") and adds names found by list:

- the first and last names of every Faker person provider with Latin-script names, read from
  the installed `faker` package when the analyzer is built (nothing is copied into the repo);
- a capitalised, unambiguous first name on its own ("Priya approved it", "Olga's laptop": the
  span stops before "'s"), or two or more name words in a row ("priya raman", "Nguyễn Văn Minh",
  "Mark Kowalski" where one word is unambiguous, "Jan de Jong" with a particle inside);
- a name word that is also a common word (Will, May, Mark, Hope, Summer...) or is in lower case
  only in context: after a title (Mr, Dr), a greeting (hi, dear), on a sign-off line ("Thanks,"
  then "maria"), after "@", after context words (ask, from, by, cc:) or in a list of names;
- "@handles", Reddit's "u/users" and email-like "first.last@" whose parts are names;
- alone and out of context, in English text only and never beside a code symbol: a lower-case
  Faker first name spaCy tags a proper noun ("wow emma and kaite"), a capitalised name opening
  its sentence before a verb ("Themba is obsessed"), an ALL-CAPS Faker first name of four letters
  or more ("BEST OF RANBIR"), a lower-case surname no list holds after a Faker first name ("amy
  schumer").

Products and brands (`screening.name_words.PRODUCT_NAMES`) are never a person on their own. The
words come from `screening.name_words` (data), spaCy's stop words, its lemmatizer's verb, adjective
and adverb lists, and Faker's English word list; spaCy's part-of-speech tag decides only whether an
ambiguous capitalised word is a proper noun.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import unicodedata
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache

from presidio_analyzer import EntityRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts

from screening import name_words as w
from screening.code_text import may_hold_code

ENTITY = "PERSON"
# Scores: the screen's PERSON rule keeps findings at 0.5 and above (screening.policy).
FULL_NAME, IN_CONTEXT, LONE_NAME = 0.85, 0.7, 0.6

_WORD = re.compile(r"[^\W\d_]+(?:['\u2019\-][^\W\d_]+)*")
_MENTION = re.compile(r"(?<![\w.@])@([^\W\d_][\w'\u2019\-]*(?:\.[\w'\u2019\-]+)*)")
# A Reddit user, `u/name` or `/u/name` (3-20 letters, digits, `_`, `-`); tokenized text writes
# `u / name`.
_REDDIT_USER = re.compile(r"(?<![\w/])/?u ?/ ?([^\W\d_][\w\-]{2,19})(?![\w/])")
_EMAIL_LOCAL = re.compile(r"(?<![\w.@])([^\W\d_][\w'\u2019\-]*(?:[._][^\W\d_][\w'\u2019\-]*)+)@\w")
_PARTS = re.compile(r"[._\-]")
# A word of code rather than of a name: lower-case then capitals (`personId`), letters and digits
# run together (`queue2`, `3x`).
_IDENTIFIER = re.compile(r"\b[a-z]+[A-Z]\w*|[^\W\d_]\d|\d[^\W\d_]")
_DASHES = "\u2013\u2014"


def _alternatives(items) -> str:
    return "|".join(re.escape(x.strip()) for x in items if x.strip())


_TITLE = re.compile(r"\b(?:" + _alternatives(w.TITLES.split()) + r")\.?\s*$", re.IGNORECASE)
_GREETING = re.compile(
    r"(?:^|[\s,.!>(])(?:good\s+)?(?:"
    + _alternatives(w.GREETINGS.split())
    + r")(?:\s+there)?\s*[,!:\-"
    + _DASHES
    + r"]?\s*$",
    re.IGNORECASE,
)
_SIGN_OFF = re.compile(
    r"^\W*(?:(?:" + _alternatives(w.SIGN_OFFS.split(",")) + r")|--|[-" + _DASHES + r"])\W*$",
    re.IGNORECASE,
)
# "my name is vitoria", "call me tomomi": any word not known as English is taken for a name.
_NAME_IS = re.compile(
    r"\b(?:my\s+name\s+is|my\s+name's|name\s+is|names\s+are|i'?m\s+called|"
    r"i\s+am\s+called|known\s+as)\s*[:,]?\s*$",
    re.IGNORECASE,
)
# "I'm tomomi", "this is Vsevolod", "call me vsevolod": a word a name list holds, or a word no
# list holds that is no English word and a proper noun or alone (`_unknown_in_context`).
_INTRO = re.compile(
    r"\b(?:i'?m|i\s+am|this\s+is|it'?s|here\s+is|meet|call\s+me)\s*,?\s*$", re.IGNORECASE
)
_LABEL = re.compile(r"^\s*(?:" + _alternatives(w.LABELS.split()) + r")\s*:\s*$", re.IGNORECASE)
_LIST_SEPARATOR = re.compile(r"\s*(?:[,;/&+]|and|or|und|et|y|e)\s*")
_MENTION_WORDS = frozenset({"here", "channel", "all", "everyone", "team", "room"})
_STOP_POS = frozenset({"VERB", "AUX", "ADP", "DET", "PRON", "ADV", "ADJ", "CCONJ", "SCONJ", "PART"})


def fold(word: str) -> str:
    """Lookup key: casefolded, curly apostrophe straightened."""
    return word.replace("\u2019", "'").casefold()


def strip_accents(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def is_latin(name: str) -> bool:
    return bool(name) and all(
        c in " '\u2019-." or "LATIN" in unicodedata.name(c, "") for c in name if not c.isspace()
    )


def held_out(name: str) -> bool:
    """About one name in ten, fixed by its spelling: kept out of the list for honest recall."""
    return zlib.crc32(strip_accents(fold(name)).encode()) % 10 == 0


@cache
def locale_names(locale: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(first names, last names) of one Faker person provider, Latin script only, sorted."""
    provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
    first: set[str] = set()
    last: set[str] = set()
    for attr in dir(provider):
        if attr.startswith("_") or not attr.endswith("names") or "kana" in attr:
            continue
        into = last if "last" in attr else first if "first" in attr or "middle" in attr else None
        values = getattr(provider, attr)
        if into is None or not isinstance(values, dict | list | tuple | set | frozenset):
            continue
        into.update(v for v in values if isinstance(v, str) and is_latin(v))
    return tuple(sorted(first)), tuple(sorted(last))


def faker_locales() -> list[str]:
    import faker.providers.person as person

    return sorted(m.name for m in pkgutil.iter_modules(person.__path__) if m.ispkg)


@cache
def faker_name_lists(exclude_held_out: bool = False) -> tuple[frozenset[str], frozenset[str]]:
    """Folded first and last names of all Faker locales (accented and unaccented spellings)."""
    keep: Callable[[str], bool] = (lambda n: not held_out(n)) if exclude_held_out else bool
    first: set[str] = set()
    last: set[str] = set()
    for locale in faker_locales():
        firsts, lasts = locale_names(locale)
        for names, into in ((firsts, first), (lasts, last)):
            for name in names:
                for part in name.split():
                    key = fold(part)
                    if key not in _PARTICLES and len(key) > 1 and keep(part):
                        into.update({key, strip_accents(key)})
    return frozenset(first), frozenset(last)


_PARTICLES = w.words(w.PARTICLES)


@dataclass(frozen=True)
class _Token:
    start: int
    end: int  # possessive "'s" excluded
    text: str
    key: str
    possessive: bool = False


class PersonNameRecognizer(EntityRecognizer):
    """PERSON from spaCy's entities (products removed) plus names found by list and context."""

    def __init__(
        self,
        first: Iterable[str],
        last: Iterable[str],
        common: Iterable[str] = (),
        wordish: Iterable[str] = (),
        stop_words: Iterable[str] = (),
        products: Iterable[str] = (),
        use_spacy: bool = True,
        more_first: Iterable[str] = (),
        more_last: Iterable[str] = (),
        english: Callable[[str], bool] = lambda key: False,
    ) -> None:
        self.first, self.last = frozenset(first), frozenset(last)
        self.products = frozenset(products) | w.words(w.PRODUCT_NAMES)
        self.stop_words = frozenset(stop_words)
        self.common = frozenset(common) | w.words(w.COMMON_WORDS) | self.stop_words
        self.wordish = frozenset(wordish) - w.words(w.NAME_FIRST)
        self.context_words = w.words(w.CONTEXT_WORDS)
        self.use_spacy = use_spacy
        # names-dataset's names (screening.name_list) that no Faker list holds and that are no
        self.english = english  # an English word or an inflection of one (by spaCy's tables)
        # English word (the caller filters those): names like Faker's, but alone and out of
        # context only as a proper noun.
        taken = self.first | self.last | self.common | self.wordish | self.products
        self.more_first = _spellings(more_first) - taken
        self.more_last = _spellings(more_last) - taken
        super().__init__(supported_entities=[ENTITY], name="PersonNameRecognizer")

    @classmethod
    def from_faker(
        cls, nlp=None, exclude_held_out: bool = False, use_spacy: bool = True
    ) -> PersonNameRecognizer:
        """Names from the installed Faker; common words from Faker's English word list and,
        given the spaCy pipeline, its stop words and its lemmatizer's verb/adjective/adverb lists."""
        from faker.providers.lorem.en_US import Provider as Lorem

        from screening.name_list import load

        first, last = faker_name_lists(exclude_held_out)
        stop: frozenset[str] = frozenset()
        wordish: set[str] = set()
        english: Callable[[str], bool] = lambda key: False  # noqa: E731
        if nlp is not None:
            stop = frozenset(nlp.Defaults.stop_words)
            if "lemmatizer" in nlp.pipe_names:
                lookups = nlp.get_pipe("lemmatizer").lookups
                index = lookups.get_table("lemma_index", {})
                for pos in ("verb", "adj", "adv"):
                    wordish.update(index.get(pos, ()))
                english = _english(lookups)
        more = load()
        keep: Callable[[str], bool] = (
            (lambda n: not held_out(n) and not english(n))
            if exclude_held_out
            else (lambda n: not english(n))
        )
        return cls(
            first,
            last,
            Lorem.word_list,
            wordish,
            stop,
            use_spacy=use_spacy,
            more_first=filter(keep, more.first),
            more_last=filter(keep, more.last),
            english=english,
        )

    def load(self) -> None:  # the lists arrive in __init__
        return None

    # --- words ------------------------------------------------------------------------------
    def _in(self, key: str, names: frozenset[str]) -> bool:
        if key in names or strip_accents(key) in names:
            return True
        if "-" in key:
            parts = [p for p in key.split("-") if len(p) > 1]
            return bool(parts) and all(self.is_name(p) for p in parts)
        if "'" in key:
            head, _, rest = key.partition("'")
            return len(head) <= 3 and (rest in names or head + rest in names)
        return False

    def is_first(self, key: str) -> bool:
        return self._in(key, self.first) or self._in(key, self.more_first)

    def is_name(self, key: str) -> bool:
        return self.is_listed(key) or self.is_more(key)

    def is_listed(self, key: str) -> bool:
        """In Faker's lists (the names a lone capitalised word is taken for without a tag)."""
        return self._in(key, self.first) or self._in(key, self.last)

    def is_more(self, key: str) -> bool:
        """Only in names-dataset's list."""
        return key in self.more_first or key in self.more_last

    def is_product(self, key: str) -> bool:
        return key in self.products or any(p in self.products for p in key.split("-"))

    def vetoes(self, text: str, start: int, end: int, score: float = 0.0) -> bool:
        """Whether another reader's PERSON span (read with `score`) is none: beside a symbol of
        code (a `#hashtag` is a mention, not code), read below 0.9 and only common words in lower
        case, capitals no name list holds or one common word opening its sentence, or only product
        names (`screening.person_model`'s spans go through this, as spaCy's do)."""
        span = _Token(start, end, text[start:end], fold(text[start:end]))
        if _in_code(text, span, hashtag=True):
            return True
        words = list(_WORD.finditer(span.text))
        if score < 0.9:  # a hesitant reader (`of`, `use`, `KLMN` read at 0.5-0.6) is asked more
            if span.text.islower() and all(_key(w) in self.common for w in words):
                return True  # common words in lower case
            if span.text.isupper() and not any(self.is_name(_key(w)) for w in words):
                return True  # capitals no name list holds: codes, acronyms
            if len(words) == 1 and not _mid_sentence(text, start) and _key(words[0]) in self.common:
                return True  # a common word opening its sentence: `Bill me for`, `Grant access`
        if score < 0.7 and may_hold_code(text):
            # a document of several lines or with code marks (an answer, a manual): the reader's
            # guesses at its terms (`integer` 0.6) sit here; a chat line's lower-case names stay
            if span.text.islower() and all(self._plain(_key(w)) for w in words):
                return True  # English words in lower case: `integer x`, `provides`
            if len(words) == 1 and not _mid_sentence(text, start) and self._plain(_key(words[0])):
                return True  # an English word opening its sentence: `Given an integer`
            if _IDENTIFIER.search(span.text):
                return True  # an identifier: `personId`, `queue2`, `3x`
        return bool(words) and all(self.is_product(_key(word)) for word in words)

    def _plain(self, key: str) -> bool:
        """A common word, an English word (by spaCy's tables) or a lone letter."""
        return key in self.common or self.english(key) or len(key) == 1

    def is_strong(self, key: str) -> bool:
        """A name that is no common word, no product."""
        return (
            self.is_name(key)
            and not self.is_product(key)
            and key not in self.common
            and key not in self.wordish
        )

    def is_unknown(self, key: str) -> bool:
        """A word no list knows: could be a name the list lacks (used in strong context)."""
        return (
            key.replace("'", "").replace("-", "").isalpha()
            and len(key) > 1
            and not self.is_name(key)
            and not self.is_product(key)
            and key not in self.common
            and key not in self.wordish
            and key not in _PARTICLES
        )

    # --- analysis ---------------------------------------------------------------------------
    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
    ) -> list[RecognizerResult]:
        if ENTITY not in entities:
            return []
        doc = nlp_artifacts.tokens if nlp_artifacts is not None else None
        pos = _PosLookup(doc, nlp_artifacts.entities if nlp_artifacts is not None else ())
        found: list[tuple[int, int, float]] = []
        if self.use_spacy and nlp_artifacts is not None:
            found += self._spacy(text, nlp_artifacts, pos)
        found += self._handles(text)
        found += self._runs(text, pos)
        return [RecognizerResult(ENTITY, s, e, score) for s, e, score in found]

    def _spacy(self, text: str, artifacts: NlpArtifacts, pos: _PosLookup) -> list:
        """spaCy's PERSON spans, cut at line breaks, product words trimmed off their edges."""
        out = []
        for ent, score in zip(artifacts.entities, artifacts.scores, strict=False):
            if ent.label_ != ENTITY:
                continue
            offset = ent.start_char
            for line in re.finditer(r"[^\n]+", ent.text):
                words = list(_WORD.finditer(line.group()))
                if any(self._spacy_drop(m) for m in words):
                    # "the Dell API": a product inside keeps the span only beside a known name.
                    if not any(self.is_strong(_key(m)) for m in words):
                        continue
                    while words and self._spacy_drop(words[0]):
                        words.pop(0)
                    while words and self._spacy_drop(words[-1]):
                        words.pop()
                base = offset + line.start()
                if len(words) == 1 and self._common_word(text, base + words[0].start(), pos):
                    continue
                if words:
                    last = words[-1]
                    end = last.end() - (2 if re.search(r"['\u2019][sS]$", last.group()) else 0)
                    out.append((base + words[0].start(), base + end, float(score)))
        return out

    def _common_word(self, text: str, start: int, pos: _PosLookup) -> bool:
        """A lone capitalised common word spaCy took for a person ("Mark the ticket", "Bill me"):
        a verb by its tag, first in its sentence, or before a lower-case noun it qualifies ("Rose
        gold", "Summer sale"), and not after a title or greeting."""
        word = _WORD.match(text, start)
        key = _key(word) if word else ""
        if key not in self.common and key not in self.wordish:
            return False
        if self._context(text, start, -1) == "strong":
            return False
        after = re.match(r" ([a-z]+)", text[word.end() :]) if word else None
        return (
            pos.tag(start) in _STOP_POS
            or not _mid_sentence(text, start)
            or (after is not None and pos.tag(word.end() + 1) == "NOUN")
        )

    def _spacy_drop(self, word: re.Match) -> bool:
        return self.is_product(_key(word))

    def _handles(self, text: str) -> list:
        out = []
        for pattern, need_two in ((_MENTION, False), (_REDDIT_USER, False), (_EMAIL_LOCAL, True)):
            for m in pattern.finditer(text):
                handle = m.group(1).rstrip(".")
                parts = [fold(p) for p in _PARTS.split(handle) if len(p) > 1]
                if not parts or (need_two and len(parts) < 2):
                    continue
                if any(self.is_product(p) or p in _MENTION_WORDS for p in parts):
                    continue
                names = [p for p in parts if self.is_name(p)]
                ok = (
                    (len(names) == len(parts) and any(self.is_strong(p) for p in parts))
                    or (not need_two and len(parts) == 1 and names)
                    or all(self.is_unknown(p) or self.is_strong(p) for p in parts)
                )
                if ok:
                    out.append((m.start(1), m.start(1) + len(handle), IN_CONTEXT))
        return out

    def _tokens(self, text: str) -> list[_Token]:
        tokens = []
        for m in _WORD.finditer(text):
            word, end = m.group(), m.end()
            possessive = len(word) > 2 and word[-2] in "'\u2019" and word[-1] in "sS"
            if possessive:
                word, end = word[:-2], end - 2
            tokens.append(_Token(m.start(), end, word, fold(word), possessive))
        return tokens

    def _runs(self, text: str, pos: _PosLookup) -> list:
        tokens = self._tokens(text)
        out: list[tuple[int, int, float]] = []
        i, last_end = 0, -1
        while i < len(tokens):
            run = self._run_from(text, tokens, i)
            if not run:
                span = self._unknown_in_context(text, tokens, i, last_end, pos)
                if span:
                    out.append(span)
                    last_end = span[1]
                i += 1
                continue
            span = self._score_run(text, run, pos, last_end)
            if span:
                out.append(span)
                last_end = span[1]
            i = tokens.index(run[-1]) + 1
        return out

    def _unknown_in_context(
        self, text: str, tokens: list[_Token], i: int, last_end: int, pos: _PosLookup
    ) -> tuple[int, int, float] | None:
        """A word no list knows, capitalised or on a sign-off line, right after a title, a
        greeting or alone on a sign-off line; the next capitalised unknown word joins it."""
        tok = tokens[i]
        if _case(tok.text) == "mixed":
            return None
        if tok.key in self.stop_words and self.is_name(tok.key) and not self.is_product(tok.key):
            # "Regards,\nWill": a stop word that is a name, alone after a greeting or sign-off
            if self._context(text, tok.start, -1) == "strong" and _ends_name(text, tok.end):
                return tok.start, tok.end, IN_CONTEXT
            return None
        if not self.is_unknown(tok.key):
            return None
        context = self._context(text, tok.start, last_end)
        if context == "intro":
            # "this is Vsevolod", "call me vsevolod": no English word, and a proper noun by its
            # tag or the last word of its phrase ("I'm gonna check" is no name).
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if self.english(tok.key) or not (
                (_case(tok.text) == "title" and pos.tag(tok.start) == "PROPN")
                or _ends_name(text, tok.end)
                or (nxt and _joins(text[tok.end : nxt.start]) and self.is_strong(nxt.key))
            ):
                return None
        elif context not in ("strong", "list"):
            return None
        end = tok.end
        if i + 1 < len(tokens) and not tok.possessive:
            nxt = tokens[i + 1]
            if (
                _joins(text[tok.end : nxt.start])
                and _case(nxt.text) == _case(tok.text)
                and (self.is_unknown(nxt.key) or self.is_strong(nxt.key))
            ):
                end = nxt.end
        return tok.start, end, IN_CONTEXT

    def _run_from(self, text: str, tokens: list[_Token], i: int) -> list[_Token]:
        """Name words in a row from token i: one space apart, particles and initials inside."""
        if not self.is_name(tokens[i].key) or tokens[i].key in self.stop_words:
            return []
        run = [tokens[i]]
        j = i + 1
        while j < len(tokens):
            gap = text[run[-1].end : tokens[j].start]
            if run[-1].possessive or not _joins(gap):
                break
            tok = tokens[j]
            if tok.key in _PARTICLES and j + 1 < len(tokens) and tok.text.islower():
                nxt = tokens[j + 1]
                if _joins(text[tok.end : nxt.start]) and self.is_name(nxt.key):
                    run += [tok, nxt]
                    j += 2
                    continue
            if not self.is_name(tok.key) or tok.key in self.stop_words:
                if self.is_unknown(tok.key) and self.is_strong(run[-1].key):
                    same_case = _case(tok.text) == _case(run[-1].text) != "lower"
                    # "amy schumer", "Mauro renallo": lower case after a Faker first name
                    after_first = (
                        _case(tok.text) == "lower"
                        and "'" not in tok.key
                        and self._in(run[-1].key, self.first)
                        and not self.english(run[-1].key)
                        and not self.english(tok.key)
                        and not _in_code(text, tok)
                        and self._english_text(text)
                    )
                    if same_case or after_first:
                        run.append(tok)  # a surname the list lacks after a known first name
                break
            run.append(tok)
            j += 1
        return run

    def _score_run(
        self, text: str, run: list[_Token], pos: _PosLookup, last_end: int
    ) -> tuple[int, int, float] | None:
        names = [t for t in run if t.key not in _PARTICLES]
        if not names:
            return None
        strong = [t for t in names if self.is_strong(t.key)]
        context = self._context(text, run[0].start, last_end)
        casing = {_case(t.text) for t in names}
        title = casing == {"title"}
        # Drop an ambiguous first word that spaCy reads as a verb ("Grant Maria access").
        while len(names) > 1 and not self.is_strong(names[0].key):
            if self.is_product(names[0].key) or (
                not context and pos.tag(names[0].start) in _STOP_POS
            ):
                names = names[1:]
                strong = [t for t in names if self.is_strong(t.key)]
            else:
                break
        while len(names) > 1 and self.is_product(names[-1].key) and not title:
            names = names[:-1]
        start, end = names[0].start, names[-1].end
        if (
            len(names) >= 2
            and not context
            and title
            and pos.other_entity(start)
            and not self._in(names[0].key, self.first)
        ):
            return None  # "Hong Kong office": spaCy's place or organisation, no Faker first name
        if len(names) >= 2:
            if strong and (title or casing == {"upper"}):
                return start, end, FULL_NAME
            ordered = self.is_first(names[0].key) and not any(
                t.key in self.stop_words or self.is_product(t.key) for t in names
            )
            if strong and (ordered or context):
                return start, end, IN_CONTEXT
            if (
                title
                and (context or self.is_first(names[0].key))
                and not any(self.is_product(t.key) for t in names)
                and (context or _mid_sentence(text, start))
            ):
                return start, end, LONE_NAME
            names = names[:1]
        tok = names[0]
        key = tok.key
        if self.is_product(key):
            return None
        if context == "strong":
            if key in self.common and not _ends_name(text, tok.end):
                return None
            return tok.start, tok.end, IN_CONTEXT
        common = key in self.common or key in self.wordish
        if context == "intro":
            return (tok.start, tok.end, IN_CONTEXT) if self.is_strong(key) else None
        if _case(tok.text) == "title":
            if not common and self.is_first(key) and (context or self.is_listed(key)):
                return tok.start, tok.end, IN_CONTEXT if context else LONE_NAME
            if not common and self._proper_noun(text, tok, pos):
                return tok.start, tok.end, LONE_NAME
            if (
                (context or key not in self.common)
                and key not in self.stop_words
                and self.is_first(key)
                and pos.tag(tok.start) == "PROPN"
            ):
                return tok.start, tok.end, IN_CONTEXT
            if not common and context:
                return tok.start, tok.end, IN_CONTEXT
            if not common and self._subject(text, tok, pos):
                return tok.start, tok.end, LONE_NAME
            return None
        if context and not common:
            return tok.start, tok.end, IN_CONTEXT
        if _case(tok.text) == "lower" and not common and self._lower_name(text, tok, pos):
            return tok.start, tok.end, LONE_NAME
        if _case(tok.text) == "upper" and not common and self._upper_name(text, tok, pos):
            return tok.start, tok.end, LONE_NAME
        return None

    def _proper_noun(self, text: str, tok: _Token, pos: _PosLookup) -> bool:
        """A name word alone, out of context: spaCy tags it a proper noun outside any place,
        organisation or work, mid-sentence or before a verb ("Vsevolod said", "met Okonkwo")."""
        return (
            self.is_strong(tok.key)
            and not self.english(tok.key)
            and pos.tag(tok.start) == "PROPN"
            and not pos.other_entity(tok.start)
            and (_mid_sentence(text, tok.start) or pos.next_tag(tok.end) in ("VERB", "AUX"))
        )

    def _subject(self, text: str, tok: _Token, pos: _PosLookup) -> bool:
        """A capitalised name word alone opening its sentence, before a verb, whatever spaCy's
        tag of it ("Themba is obsessed", "Shaq had me weak"): no English word, no place or
        organisation by spaCy."""
        return (
            self.is_strong(tok.key)
            and "'" not in tok.key
            and not self.english(tok.key)
            and not _mid_sentence(text, tok.start)
            and pos.next_tag(tok.end) in ("VERB", "AUX")
            and not pos.other_entity(tok.start)
        )

    def _lower_name(self, text: str, tok: _Token, pos: _PosLookup) -> bool:
        """A lower-case first name alone out of context ("wow emma and kaite", "conor makes
        millions"): one of Faker's first names (names-dataset's hold too much slang: imma, soo,
        wey) that no English word or stop word shares, that spaCy tags a proper noun outside any
        place or organisation, not inside a path, an identifier or markup."""
        return (
            self._in(tok.key, self.first)
            and self.is_strong(tok.key)
            and "'" not in tok.key
            and not self.english(tok.key)
            and tok.key not in self.stop_words
            and pos.tag(tok.start) == "PROPN"
            and not pos.other_entity(tok.start)
            and not _in_code(text, tok)
            and self._english_text(text)
        )

    def _upper_name(self, text: str, tok: _Token, pos: _PosLookup) -> bool:
        """An ALL-CAPS first name alone ("IS THAT IDRIS?!", "BEST OF RANBIR"): four letters or
        more (shorter ones are mostly acronyms), one of Faker's first names that no English
        word, stop word or product shares, outside spaCy's places and organisations."""
        return (
            len(tok.key) >= 4
            and self._in(tok.key, self.first)
            and self.is_strong(tok.key)
            and "'" not in tok.key
            and not self.english(tok.key)
            and tok.key not in self.stop_words
            and not pos.other_entity(tok.start)
            and not _in_code(text, tok)
            and self._english_text(text)
        )

    def _english_text(self, text: str) -> bool:
        """Half the words of the text or more, names aside, are English words or stop words: the
        lower-case and ALL-CAPS rules hold for English text only (in a Spanish tweet "una",
        "vida" are no names)."""
        words = [k for k in map(fold, _WORD.findall(text)) if len(k) > 1 and not self.is_name(k)]
        known = sum(k in self.stop_words or k in self.common or self.english(k) for k in words)
        return known >= 0.5 * len(words)

    def _context(self, text: str, start: int, last_end: int) -> str | None:
        """'strong' after a title, greeting, on a sign-off line, after "my name is"; 'intro'
        after "I'm", "this is" (a name word only); 'weak' after a context word or a name just
        found (lists); None otherwise."""
        line_start = text.rfind("\n", 0, start) + 1
        prefix = text[line_start:start]
        if _TITLE.search(prefix) or _GREETING.search(prefix) or _NAME_IS.search(prefix):
            return "strong"
        if _INTRO.search(prefix):
            return "intro"
        if _SIGN_OFF.match(prefix) and prefix.strip():
            return "strong"
        if not prefix.strip() or re.fullmatch(r"\W*", prefix):
            before = text[:line_start].rstrip("\n ")
            previous = before[before.rfind("\n") + 1 :]
            if previous and _SIGN_OFF.match(previous):
                return "strong"
        if _LABEL.match(prefix):
            return "strong"
        if last_end >= 0 and _LIST_SEPARATOR.fullmatch(text[last_end:start]):
            return "list"
        words = re.findall(r"[\w:-]+", re.split(r"[.!?]\s", prefix)[-1].casefold())
        if words and (
            words[-1] in self.context_words or words[-1].rstrip(":") in self.context_words
        ):
            return "weak"
        return None


class _PosLookup:
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


def _english(
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


def _spellings(names: Iterable[str]) -> frozenset[str]:
    """Folded names of three letters or more, with and without accents."""
    keys = {fold(n) for n in names if len(n) > 2}
    return frozenset(keys | {strip_accents(k) for k in keys})


def _key(word: re.Match) -> str:
    key = fold(word.group())
    return key[:-2] if key.endswith("'s") else key


def _joins(gap: str) -> bool:
    return gap in (" ", "  ") or bool(re.fullmatch(r" ?[A-Z]\. ", gap))


def _case(word: str) -> str:
    if word.isupper():
        return "upper" if len(word) > 1 else "title"
    if word.islower():
        return "lower"
    return "title" if word[0].isupper() else "mixed"


def _ends_name(text: str, end: int) -> bool:
    """A common word is a name in context only when nothing but punctuation follows it."""
    rest = text[end : end + 2]
    return not rest or rest[0] in ",.!?:;)\n" or rest.startswith("'s") or rest.startswith("\u2019s")


def _in_code(text: str, tok: _Token, hashtag: bool = False) -> bool:
    """Part of a path, an identifier, a URL or markup: a symbol of code right beside it (but a
    `#` before it, with `hashtag`)."""
    before = text[tok.start - 1 : tok.start]
    if hashtag and before == "#":
        before = ""
    after = text[tok.end : tok.end + 1]
    return bool(re.match(r"[/\\_=\[\]{}<>.:@#$`]", before) or re.match(r"[/\\_=\[\]{}<>(`]", after))


def _mid_sentence(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    return bool(before) and before[-1] not in ".!?:\n\"'"


def install(analyzer, nlp, **kwargs) -> PersonNameRecognizer:
    """Register the recognizer on an AnalyzerEngine and take PERSON away from its spaCy one."""
    from presidio_analyzer.predefined_recognizers import SpacyRecognizer

    for recognizer in analyzer.registry.recognizers:
        if isinstance(recognizer, SpacyRecognizer) and ENTITY in recognizer.supported_entities:
            recognizer.supported_entities = [
                e for e in recognizer.supported_entities if e != ENTITY
            ]
    recognizer = PersonNameRecognizer.from_faker(nlp, **kwargs)
    analyzer.registry.add_recognizer(recognizer)
    return recognizer
