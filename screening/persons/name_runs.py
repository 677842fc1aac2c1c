"""Runs of name words read in their context: `NameRuns`, the part of `PersonNameRecognizer`
that scores a run of name words by what surrounds it.
"""

from __future__ import annotations

import re

from screening.persons.faker_names import PARTICLES, fold
from screening.persons.name_text import (
    ADDRESSED,
    FULL_NAME,
    GREETING,
    IN_CONTEXT,
    INTRO,
    LABEL,
    LIST_SEPARATOR,
    LONE_NAME,
    NAME_IS,
    NAME_WORD,
    OFFICE_WORDS,
    SIGN_OFF,
    STOP_POS,
    TITLE,
    TITLE_DOT,
    TITLE_WORDS,
    PosLookup,
    Token,
    ends_name,
    in_code,
    in_salutation,
    is_place,
    joins_names,
    mid_sentence,
    word_case,
)


class NameRuns:
    """Runs of name words read in their context: where a run starts and ends, how it scores
    (`FULL_NAME`, `IN_CONTEXT`, `LONE_NAME`), what a word alone must be. A mixin of
    `PersonNameRecognizer`, whose lists and vetoes it reads."""

    def _runs(self, text: str, pos: PosLookup) -> list:
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
        self, text: str, tokens: list[Token], i: int, last_end: int, pos: PosLookup
    ) -> tuple[int, int, float] | None:
        """A word no list knows, capitalised or on a sign-off line, right after a title, a
        greeting or alone on a sign-off line; the next capitalised unknown word joins it."""
        tok = tokens[i]
        if (
            word_case(tok.text) == "mixed"
            or tok.key in TITLE_WORDS
            or (tok.key in OFFICE_WORDS and text[tok.end : tok.end + 1] == ".")
        ):
            return None  # `iPhone`; `Mr`, `Sgt.` open a name, are none
        if tok.key in self.stop_words and self.is_name(tok.key) and not self.is_product(tok.key):
            # "Regards,\nWill": a stop word that is a name, alone after a greeting or sign-off
            if self._context(text, tok.start, -1) == "strong" and ends_name(text, tok.end):
                return tok.start, tok.end, IN_CONTEXT
            return None
        if (
            word_case(tok.text) == "title"
            and len(tok.key) > 1
            and tok.key not in self.stop_words
            and tok.key not in ADDRESSED
            and not self.is_product(tok.key)
            and TITLE_DOT.search(text, max(0, tok.start - 12), tok.start)
        ):
            return tok.start, tok.end, IN_CONTEXT  # `Dr. Strange`, `Capt. Hook`, `Col. Mustard`
        if not self.is_unknown(tok.key) or self._greets(text, tok):
            return None
        context = self._context(text, tok.start, last_end)
        if word_case(tok.text) == "caseless" and not self._after_label(text, tok.start):
            return None  # a word of a script without case is a name after a name field only
        if context == "intro":
            # "this is Vsevolod", "call me vsevolod": no English word, and a proper noun by its
            # tag or the last word of its phrase ("I'm gonna check" is no name).
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if self.english(tok.key) or not (
                (word_case(tok.text) == "title" and pos.tag(tok.start) == "PROPN")
                or ends_name(text, tok.end)
                or (nxt and joins_names(text[tok.end : nxt.start]) and self.is_strong(nxt.key))
            ):
                return None
        elif context not in ("strong", "list"):
            return None
        elif word_case(tok.text) == "lower" and not self._english_text(text):
            return None  # `Jürgen Müller und wohne`, `Hola amigos`: lower-case rules hold for
            # English text only
        end = tok.end
        if i + 1 < len(tokens) and not tok.possessive:
            nxt = tokens[i + 1]
            if (
                joins_names(text[tok.end : nxt.start])
                and word_case(nxt.text) == word_case(tok.text)
                and (self.is_unknown(nxt.key) or self.is_strong(nxt.key))
            ):
                end = nxt.end
        return tok.start, end, IN_CONTEXT

    def _run_from(self, text: str, tokens: list[Token], i: int) -> list[Token]:
        """Name words in a row from token i: one space apart, particles and initials inside."""
        if (
            not self.is_name(tokens[i].key)
            or tokens[i].key in self.stop_words
            or self._greets(text, tokens[i])
        ):
            return []
        run = [tokens[i]]
        j = i + 1
        while j < len(tokens):
            gap = text[run[-1].end : tokens[j].start]
            if run[-1].possessive or not joins_names(gap):
                break
            tok = tokens[j]
            if tok.key in PARTICLES and j + 1 < len(tokens) and tok.text.islower():
                nxt = tokens[j + 1]
                if joins_names(text[tok.end : nxt.start]) and self.is_name(nxt.key):
                    run += [tok, nxt]
                    j += 2
                    continue
            if not self.is_name(tok.key) or tok.key in self.stop_words:
                if self.is_unknown(tok.key) and self.is_strong(run[-1].key):
                    same_case = word_case(tok.text) == word_case(run[-1].text) != "lower"
                    # "amy schumer", "Mauro renallo": lower case after a Faker first name
                    after_first = (
                        word_case(tok.text) == "lower"
                        and "'" not in tok.key
                        and self._in(run[-1].key, self.first)
                        and not self.english(run[-1].key)
                        and not self.english(tok.key)
                        and not in_code(text, tok)
                        and self._english_text(text)
                    )
                    if same_case or after_first:
                        run.append(tok)  # a surname the list lacks after a known first name
                break
            run.append(tok)
            j += 1
        return run

    def _score_run(
        self, text: str, run: list[Token], pos: PosLookup, last_end: int
    ) -> tuple[int, int, float] | None:
        names = [t for t in run if t.key not in PARTICLES]
        # `Jürgen Müller und wohne`, `Spokesman Ali Khan said`: a lower-case word ending a run
        # of capitalised names is none (it stays in the run, so it opens no run of its own),
        # unless a first name precedes it in English text (`Mauro renallo`)
        while (
            len(names) > 1
            and word_case(names[-1].text) == "lower"
            and word_case(names[-2].text) != "lower"
            and not (self._in(names[-2].key, self.first) and self._english_text(text))
        ):
            names = names[:-1]
        if not names:
            return None
        strong = [t for t in names if self.is_strong(t.key)]
        context = self._context(text, run[0].start, last_end)
        casing = {word_case(t.text) for t in names}
        title = casing == {"title"}
        # Drop an ambiguous first word that spaCy reads as a verb ("Grant Maria access").
        while len(names) > 1 and not self.is_strong(names[0].key):
            if self.is_product(names[0].key) or (
                not context and pos.tag(names[0].start) in STOP_POS
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
                and (context or mid_sentence(text, start))
            ):
                return start, end, LONE_NAME
            names = names[:1]
        tok = names[0]
        key = tok.key
        if self.is_product(key):
            return None
        if context == "strong":
            if key in self.common and not ends_name(text, tok.end):
                return None
            return tok.start, tok.end, IN_CONTEXT
        common = key in self.common or key in self.wordish
        if context == "intro":
            return (tok.start, tok.end, IN_CONTEXT) if self.is_strong(key) else None
        if word_case(tok.text) == "title":
            if pos.other_entity(tok.start) and is_place(key) and not _beside_capital(text, tok):
                # `friends from Florida`, `trips to Israel`: a listed name (Faker's US first
                # names hold both) that spaCy reads as the place it is; a title, greeting or
                # sign-off before it (returned above) or a capitalised word beside it (`French
                # Montana`) still makes it a name
                return None
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
        if word_case(tok.text) == "lower" and not common and self._lower_name(text, tok, pos):
            return tok.start, tok.end, LONE_NAME
        if word_case(tok.text) == "upper" and not common and self._upper_name(text, tok, pos):
            return tok.start, tok.end, LONE_NAME
        return None

    def _proper_noun(self, text: str, tok: Token, pos: PosLookup) -> bool:
        """A name word alone, out of context: spaCy tags it a proper noun outside any place,
        organisation or work, mid-sentence or before a verb ("Vsevolod said", "met Okonkwo")."""
        return (
            self.is_strong(tok.key)
            and not self.english(tok.key)
            and pos.tag(tok.start) == "PROPN"
            and not pos.other_entity(tok.start)
            and (mid_sentence(text, tok.start) or pos.next_tag(tok.end) in ("VERB", "AUX"))
        )

    def _subject(self, text: str, tok: Token, pos: PosLookup) -> bool:
        """A capitalised name word alone opening its sentence, before a verb, whatever spaCy's
        tag of it ("Themba is obsessed", "Shaq had me weak"): no English word, no place or
        organisation by spaCy."""
        return (
            self.is_strong(tok.key)
            and "'" not in tok.key
            and not self.english(tok.key)
            and not mid_sentence(text, tok.start)
            and pos.next_tag(tok.end) in ("VERB", "AUX")
            and not pos.other_entity(tok.start)
        )

    def _lower_name(self, text: str, tok: Token, pos: PosLookup) -> bool:
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
            and not in_code(text, tok)
            and self._english_text(text)
        )

    def _upper_name(self, text: str, tok: Token, pos: PosLookup) -> bool:
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
            and not in_code(text, tok)
            and self._english_text(text)
        )

    def _english_text(self, text: str) -> bool:
        """Half the words of the text or more, names aside, are English words or stop words: the
        lower-case and ALL-CAPS rules hold for English text only (in a Spanish tweet "una",
        "vida" are no names)."""
        words = [
            k for k in map(fold, NAME_WORD.findall(text)) if len(k) > 1 and not self.is_name(k)
        ]
        known = sum(k in self.stop_words or k in self.common or self.english(k) for k in words)
        return known >= 0.5 * len(words)

    def _greets(self, text: str, tok: Token) -> bool:
        """A word of another language's greeting or sign-off (`Terveisin`; `Hei Maija`: the name
        is `Maija`; `días` of `Buenos días`), even where a name list holds it (`Hei`)."""
        return tok.key in self.salutations or in_salutation(text, tok.start)

    def _after_label(self, text: str, start: int) -> bool:
        """Right after a form's name field (`Contact person:`, `Name:`)."""
        return bool(LABEL.match(text[text.rfind("\n", 0, start) + 1 : start]))

    def _context(self, text: str, start: int, last_end: int) -> str | None:
        """'strong' after a title, greeting, on a sign-off line, after "my name is"; 'intro'
        after "I'm", "this is" (a name word only); 'weak' after a context word or a name just
        found (lists); None otherwise."""
        line_start = text.rfind("\n", 0, start) + 1
        prefix = text[line_start:start]
        if TITLE.search(prefix) or GREETING.search(prefix) or NAME_IS.search(prefix):
            return "strong"
        if INTRO.search(prefix):
            return "intro"
        if SIGN_OFF.match(prefix) and prefix.strip():
            return "strong"
        if _closes_line(text, start) and SIGN_OFF.match(_last_sentence(prefix)):
            return "strong"  # "It smelled awful. Talk to you later GT"; not "Thank you guys."
        if not prefix.strip() or re.fullmatch(r"\W*", prefix):
            before = text[:line_start].rstrip("\n ")
            previous = before[before.rfind("\n") + 1 :]
            if previous and SIGN_OFF.match(previous):
                return "strong"
        if LABEL.match(prefix):
            return "strong"
        if last_end >= 0 and LIST_SEPARATOR.fullmatch(text[last_end:start]):
            return "list"
        words = re.findall(r"[\w:-]+", re.split(r"[.!?]\s", prefix)[-1].casefold())
        if words and (
            words[-1] in self.context_words or words[-1].rstrip(":") in self.context_words
        ):
            return "weak"
        return None


_SENTENCE_END = re.compile(r"[.!?]+\s+")
_LINE_CLOSE = re.compile(r"[\w'\u2019.-]+(?:[ \t]+[\w'\u2019.-]+)?[^\w\n]*(?:\n|$)")


def _last_sentence(prefix: str) -> str:
    """The last sentence with words in a line's text before a word ("" when there is none)."""
    sentences = [s for s in _SENTENCE_END.split(prefix) if s.strip()]
    return sentences[-1] if sentences else ""


def _closes_line(text: str, start: int) -> bool:
    """One or two words from `start`, the first capitalised, then only punctuation to the
    line's end: a closing's signature, not a sentence going on."""
    return text[start : start + 1].isupper() and bool(_LINE_CLOSE.match(text, start))


_CAPITAL_BEFORE = re.compile(r"[A-Z][\w'-]*[ \t]+$")
_CAPITAL_AFTER = re.compile(r"[ \t]+[A-Z]")


def _beside_capital(text: str, tok: Token) -> bool:
    """Whether a capitalised word stands right before or after `tok` on its line."""
    return bool(
        _CAPITAL_BEFORE.search(text, max(0, tok.start - 40), tok.start)
        or _CAPITAL_AFTER.match(text, tok.end)
    )
