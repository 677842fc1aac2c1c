"""Person names by list and context, beside spaCy's PERSON.

spaCy's small English pipeline misses names in sign-offs, greetings, lower case, lists and
possessives, and takes some products for people (Kafka, Zendesk, Oracle). `PersonNameRecognizer`
takes over PERSON from Presidio's spaCy recognizer: it keeps spaCy's PERSON spans (minus those
that are only product names, a verb such as "Mark it done", or capitalised English words no name
list holds, "Cigar Lounge", unless a title or greeting comes first) and adds names found by list:

- the first and last names of every Faker person provider with Latin-script names, read from
  the installed `faker` package when the analyzer is built (nothing is copied into the repo);
- a capitalised, unambiguous first name on its own ("Priya approved it", "Olga's laptop": the
  span stops before "'s"), or two or more name words in a row ("priya raman", "Nguyễn Văn Minh",
  "Mark Kowalski" where one word is unambiguous, "Jan de Jong" with a particle inside); a listed
  name that is also a town, country or US state and that spaCy reads as a place ("friends from
  Florida", "trips to Israel") is none, unless a title, a greeting or a capitalised word is beside it;
- a name word that is also a common word (Will, May, Mark, Hope, Summer...) or is in lower case
  only in context: after a title (Mr, Dr), a greeting (hi, dear), on a sign-off line ("Thanks,"
  then "maria"), after "@", after context words (ask, from, by, cc:) or in a list of names;
- "@handles", Reddit's "u/users" and email-like "first.last@" whose parts are names;
- alone and out of context, in English text only and never beside a code symbol: a lower-case
  Faker first name spaCy tags a proper noun ("wow emma and kaite"), a capitalised name opening
  its sentence before a verb ("Themba is obsessed"), an ALL-CAPS Faker first name of four letters
  or more ("BEST OF RANBIR"), a lower-case surname no list holds after a Faker first name ("amy
  schumer").

Products and brands (`screening.persons.name_words.PRODUCT_NAMES`) are never a person on their own. The
words come from `screening.persons.name_words` (data), spaCy's stop words, its lemmatizer's verb, adjective
and adverb lists, and Faker's English word list; spaCy's part-of-speech tag decides only whether an
ambiguous capitalised word is a proper noun.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from presidio_analyzer import EntityRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts

from screening.code_text import may_hold_code
from screening.persons import name_words as w
from screening.persons.faker_names import PARTICLES, faker_name_lists, fold, held_out, strip_accents
from screening.persons.name_runs import NameRuns
from screening.persons.name_text import (
    DISPLAY_NAME,
    EMAIL_LOCAL,
    ENTITY,
    IDENTIFIER,
    IN_CONTEXT,
    INITIALS,
    MENTION,
    MENTION_WORDS,
    NAME_WORD,
    PARTS,
    REDDIT_USER,
    STOP_POS,
    PosLookup,
    Token,
    english_words,
    in_code,
    in_salutation,
    mid_sentence,
    name_spellings,
    word_key,
)


class PersonNameRecognizer(NameRuns, EntityRecognizer):
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
        self.headings = w.words(w.HEADINGS)
        self.salutations = w.SALUTATIONS
        self.use_spacy = use_spacy
        # names-dataset's names (screening.persons.name_list) that no Faker list holds and that are no
        self.english = english  # an English word or an inflection of one (by spaCy's tables)
        # English word (the caller filters those): names like Faker's, but alone and out of
        # context only as a proper noun.
        taken = self.first | self.last | self.common | self.wordish | self.products
        self.more_first = name_spellings(more_first) - taken
        self.more_last = name_spellings(more_last) - taken
        super().__init__(supported_entities=[ENTITY], name="PersonNameRecognizer")

    @classmethod
    def from_faker(
        cls, nlp=None, exclude_held_out: bool = False, use_spacy: bool = True
    ) -> PersonNameRecognizer:
        """Names from the installed Faker; common words from Faker's English word list and,
        given the spaCy pipeline, its stop words and its lemmatizer's verb/adjective/adverb lists."""
        from faker.providers.lorem.en_US import Provider as Lorem

        from screening.persons.name_list import load

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
                english = english_words(lookups)
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
        names (`screening.persons.person_model`'s spans go through this, as spaCy's do)."""
        span = Token(start, end, text[start:end], fold(text[start:end]))
        if in_code(text, span, hashtag=True):
            return True
        words = list(NAME_WORD.finditer(span.text))
        if score < 0.9:  # a hesitant reader (`of`, `use`, `KLMN` read at 0.5-0.6) is asked more
            if span.text.islower() and all(word_key(w) in self.common for w in words):
                return True  # common words in lower case
            if span.text.isupper() and not any(self.is_name(word_key(w)) for w in words):
                return True  # capitals no name list holds: codes, acronyms
            if (
                len(words) == 1
                and not mid_sentence(text, start)
                and word_key(words[0]) in self.common
            ):
                return True  # a common word opening its sentence: `Bill me for`, `Grant access`
        if score < 0.7 and may_hold_code(text):
            # a document of several lines or with code marks (an answer, a manual): the reader's
            # guesses at its terms (`integer` 0.6) sit here; a chat line's lower-case names stay
            if span.text.islower() and all(self.is_plain(word_key(w)) for w in words):
                return True  # English words in lower case: `integer x`, `provides`
            if (
                len(words) == 1
                and not mid_sentence(text, start)
                and self.is_plain(word_key(words[0]))
            ):
                return True  # an English word opening its sentence: `Given an integer`
            if IDENTIFIER.search(span.text):
                return True  # an identifier: `personId`, `queue2`, `3x`
        if self._heading(words) or self._salutation(words):
            return True  # `Curriculum Vitae`, `Work Experience`; `Saludos`, `Hei!`
        if words and all(in_salutation(text, start + w.start()) for w in words):
            return True  # `Dia` of `Bom Dia`
        return bool(words) and all(self.is_product(word_key(word)) for word in words)

    def _heading(self, words: list[re.Match]) -> bool:
        """Words of a CV's or a letter's heading only (`HEADINGS`): no person."""
        return bool(words) and all(word_key(w) in self.headings for w in words)

    def _salutation(self, words: list[re.Match]) -> bool:
        """Only words of another language's greeting or sign-off of one word (`Saludos`,
        `Terveisin`, `Hei`): no person."""
        return bool(words) and all(word_key(w) in self.salutations for w in words)

    def is_plain(self, key: str) -> bool:
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
            and key not in PARTICLES
        )

    # --- analysis ---------------------------------------------------------------------------
    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
    ) -> list[RecognizerResult]:
        if ENTITY not in entities:
            return []
        doc = nlp_artifacts.tokens if nlp_artifacts is not None else None
        pos = PosLookup(doc, nlp_artifacts.entities if nlp_artifacts is not None else ())
        found: list[tuple[int, int, float]] = []
        if self.use_spacy and nlp_artifacts is not None:
            found += self._spacy(text, nlp_artifacts, pos)
        found += self._handles(text)
        found += self._display_names(text)
        found += self._initials(text)
        found += self._runs(text, pos)
        return [RecognizerResult(ENTITY, s, e, score) for s, e, score in found]

    def _spacy(self, text: str, artifacts: NlpArtifacts, pos: PosLookup) -> list:
        """spaCy's PERSON spans, cut at line breaks, product words trimmed off their edges; the
        part of a span on a later line only where it holds a name no common word shares (spaCy
        runs a name on into the next line of a form or a CV: `Ivanov` + `Date of birth`,
        `Astrid Lindqvist` + `Stockholm`)."""
        out = []
        for ent, score in zip(artifacts.entities, artifacts.scores, strict=False):
            if ent.label_ != ENTITY:
                continue
            offset = ent.start_char
            for line in re.finditer(r"[^\n]+", ent.text):
                words = list(NAME_WORD.finditer(line.group()))
                if line.start() > 0 and not any(self.is_strong(word_key(m)) for m in words):
                    continue
                if self._heading(words) or self._salutation(words):
                    continue  # `Curriculum Vitae`, `Saludos`
                if any(self._spacy_drop(m) for m in words):
                    # "the Dell API": a product inside keeps the span only beside a known name.
                    if not any(self.is_strong(word_key(m)) for m in words):
                        continue
                    while words and self._spacy_drop(words[0]):
                        words.pop(0)
                    while words and self._spacy_drop(words[-1]):
                        words.pop()
                base = offset + line.start()
                while words and (
                    word_key(words[0]) in self.salutations
                    or in_salutation(text, base + words[0].start())
                ):
                    words.pop(0)  # `Buenos días Carlos`, `Ciao Giulia`: the name is the last
                if len(words) == 1 and self._common_word(text, base + words[0].start(), pos):
                    continue
                if self._only_words(words) and self._context(text, base, -1) != "strong":
                    continue  # `Hidden Nook`, `Cigar Lounge`: English words no name list holds
                if words:
                    last = words[-1]
                    end = last.end() - (2 if re.search(r"['\u2019][sS]$", last.group()) else 0)
                    if not _code_like(text, base + words[0].start(), base + end):
                        out.append((base + words[0].start(), base + end, float(score)))
        return out

    def _common_word(self, text: str, start: int, pos: PosLookup) -> bool:
        """A lone capitalised common word spaCy took for a person ("Mark the ticket", "Bill me"):
        a verb by its tag, first in its sentence, or before a lower-case noun it qualifies ("Rose
        gold", "Summer sale"), and not after a title or greeting."""
        word = NAME_WORD.match(text, start)
        key = word_key(word) if word else ""
        if key not in self.common and key not in self.wordish:
            return False
        if self._context(text, start, -1) == "strong":
            return False
        after = re.match(r" ([a-z]+)", text[word.end() :]) if word else None
        return (
            pos.tag(start) in STOP_POS
            or not mid_sentence(text, start)
            or (after is not None and pos.tag(word.end() + 1) == "NOUN")
        )

    def _only_words(self, words: list[re.Match]) -> bool:
        """Capitalised English words only, none a name any list holds: no person by spaCy alone."""
        keys = [word_key(m) for m in words]
        return bool(keys) and all(
            self.is_plain(k) and not self.is_name(k) and not self.is_more(k) for k in keys
        )

    def _spacy_drop(self, word: re.Match) -> bool:
        return self.is_product(word_key(word))

    def _display_names(self, text: str) -> list:
        """The display name before an e-mail address in angle brackets (`"TJO" <tj@...>`,
        `Maria Perez <mp@...>`): its words from the first that is no common or English word (a
        name list may hold it); none when no such word is left (`"Support Team" <support@...>`,
        `No Reply <noreply@...>`) or one is a product."""
        out = []
        for m in DISPLAY_NAME.finditer(text):
            group = 1 if m.group(1) is not None else 2
            words = list(NAME_WORD.finditer(m.group(group)))
            if group == 2:  # unquoted: the capitalised words right before the address
                capitalised = [w.group()[0].isupper() for w in words]
                first = len(words)
                while first and capitalised[first - 1]:
                    first -= 1
                words = words[first:]
            # `Contact Ngozi <...>`: the English words before the name are none of it
            while words and self._plain_word(word_key(words[0])):
                words.pop(0)
            keys = [word_key(w) for w in words]
            if not keys or any(
                self.is_product(k) or (_CAMEL.search(w.group()) and not self.is_name(k))
                for k, w in zip(keys, words, strict=True)
            ):
                continue  # `"GitHub" <noreply@github.com>`
            base = m.start(group)
            out.append((base + words[0].start(), base + words[-1].end(), IN_CONTEXT))
        return out

    def _plain_word(self, key: str) -> bool:
        """A common or English word (or its plural) that is no first name: `Contact`, `Sales`
        (a surname too), not `Mark`."""
        plain = self.is_plain(key) or (key.endswith("s") and self.is_plain(key[:-1]))
        return plain and not self.is_first(key)

    def _initials(self, text: str) -> list:
        """Initials and a surname (`V K Choudhry`, `J. R. Okafor`): the surname in a name list
        and no common word or product, or a word no list knows that is no English word."""
        out = []
        for m in INITIALS.finditer(text):
            key = fold(m.group(2))
            if self.is_strong(key) or (self.is_unknown(key) and not self.english(key)):
                out.append((m.start(1), m.end(2), IN_CONTEXT))
        return out

    def _handles(self, text: str) -> list:
        out = []
        for pattern, need_two in ((MENTION, False), (REDDIT_USER, False), (EMAIL_LOCAL, True)):
            for m in pattern.finditer(text):
                handle = m.group(1).rstrip(".")
                parts = [fold(p) for p in PARTS.split(handle) if len(p) > 1]
                if not parts or (need_two and len(parts) < 2):
                    continue
                if any(self.is_product(p) or p in MENTION_WORDS for p in parts):
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

    def _tokens(self, text: str) -> list[Token]:
        tokens = []
        for m in NAME_WORD.finditer(text):
            word, end = m.group(), m.end()
            possessive = len(word) > 2 and word[-2] in "'\u2019" and word[-1] in "sS"
            if possessive:
                word, end = word[:-2], end - 2
            tokens.append(Token(m.start(), end, word, fold(word), possessive))
        return tokens


# A brand's inner capital (`GitHub`, `PayPal`); a name list holds `McDonald`, `DeShawn`
_CAMEL = re.compile(r"[a-z][A-Z]")
# Inside a span, what a name never holds: a bracket, an underscore, an operator, a path's or
# markup's symbol, or a dot before a lower-case letter (`len(arr`, `dict_arr`, `q.enqueue`)
_CODE_INSIDE = re.compile(r"[()_=\[\]{}<>;/\\$#@`|]|\.[a-z]")


def _code_like(text: str, start: int, end: int) -> bool:
    """Whether spaCy's PERSON span is a piece of code: a symbol of code inside it or right
    beside it (a `#hashtag` is a mention, not code), or an identifier's shape (`getNumber`,
    `queue2`)."""
    span = text[start:end]
    return bool(
        _CODE_INSIDE.search(span)
        or IDENTIFIER.search(span)
        or in_code(text, Token(start, end, span, span.casefold()), hashtag=True)
    )


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
