"""Phone numbers of every region libphonenumber knows.

Presidio's PhoneRecognizer runs libphonenumber's matcher over the whole text once per region, for
eight regions (US, GB, DE, FR, IL, IN, CA, BR): `451 5986` after "Phone:" or a UK mobile outside
the ranges it calls valid (`+447700 208 815`) stay. `PhoneNumberRecognizer` takes PHONE_NUMBER over:

- libphonenumber runs only on candidates: runs of 6-15 digits, with the separators people write
  (spaces, dots, dashes, slashes, parentheses) and an optional `+` or `00` in front;
- a number in international form (`+<country code> ...` or `00<country code> ...`) is a phone
  anywhere: 0.7 when libphonenumber calls it valid, 0.5 when only its length is possible;
- a number in national form is a phone at 0.4 when valid for one of those eight regions (as
  Presidio found it; Presidio's context words raise it), and at 0.6 when a phone word precedes
  it (phone, tel, mobile, call, whatsapp, fax, and the same in other languages) and it is valid
  for any of libphonenumber's 245 regions (the eight first, the rest only then, answers cached).
"""

from __future__ import annotations

import re
from functools import lru_cache

import phonenumbers
from phonenumbers import PhoneNumberMatcher, ValidationResult
from presidio_analyzer import AnalysisExplanation, EntityRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts

from screening.redact import Span

ENTITY = "PHONE_NUMBER"
INTERNATIONAL_VALID, INTERNATIONAL_POSSIBLE = 0.7, 0.5
NATIONAL, NATIONAL_IN_CONTEXT = 0.4, 0.6
FIRST_REGIONS = ("US", "GB", "DE", "FR", "IL", "IN", "CA", "BR")  # Presidio's defaults

# Words before a phone number, in the languages of the screen's users (lower case).
PHONE_WORDS = (
    "phone", "telephone", "tel", "tel.", "mobile", "mob", "cell", "cellphone", "call", "ring",
    "text me", "sms", "whatsapp", "signal", "viber", "telegram", "fax", "landline", "hotline",
    "reach me", "dial",
    "telefon", "telefonnummer", "handy", "mobil", "rufnummer", "anrufen",  # de, da, no, sv
    "téléphone", "tél", "portable", "numéro", "appelez", "appeler",  # fr
    "teléfono", "telefono", "móvil", "movil", "celular", "llamar", "llame", "número",  # es, pt
    "cellulare", "chiamare", "numero",  # it
    "telefoon", "mobiel", "nummer", "bellen",  # nl
    "telefone", "telemóvel", "ligar",  # pt
    "puhelin", "numer", "komórka", "telefonu", "телефон", "тел", "номер", "τηλ",  # fi, pl, ru, el
    "電話", "携帯", "电话", "手机", "전화", "फ़ोन", "هاتف",  # ja, zh, ko, hi, ar
)  # fmt: skip
_PHONE_WORD = re.compile(
    r"(?<![^\W\d_])(?:" + "|".join(re.escape(w) for w in PHONE_WORDS) + r")",
    re.IGNORECASE,
)
_CONTEXT = 40
# Words that make a nearer digit run a reference, not a phone ("The order number is #2640684").
_REFERENCE_WORD = re.compile(
    r"(?<![^\W\d_])(?:order|invoice|ticket|tracking|reference|ref|case|booking|account|"
    r"serial|sku|id)\b",
    re.IGNORECASE,
)
_CANDIDATE = re.compile(
    r"(?<![\w+])(?:\+|\b00)?\(?\d[\d()]*(?:(?:[ .\-/]|\u00a0| - )\(?\d[\d()]*)*(?![\w])"
)
_INTERNATIONAL = re.compile(r"\+|00[1-9]")
# Digit runs that are something else: IPv4 addresses, decimals, dates and times.
_NOT_PHONE = re.compile(
    r"\d{1,3}(?:\.\d{1,3}){3}|\d+\.\d+|\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:\s.*)?|"
    r"\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}|.*\d:\d\d.*"
)


@lru_cache(maxsize=8192)
def _international(candidate: str) -> float:
    number = "+" + candidate[2:] if candidate.startswith("00") else candidate
    try:
        parsed = phonenumbers.parse(number, None)
    except phonenumbers.NumberParseException:
        return 0.0
    if phonenumbers.is_valid_number(parsed):
        return INTERNATIONAL_VALID
    reason = phonenumbers.is_possible_number_with_reason(parsed)
    return INTERNATIONAL_POSSIBLE if reason == ValidationResult.IS_POSSIBLE else 0.0


@lru_cache(maxsize=8192)
def _valid_in_any_region(candidate: str) -> bool:
    rest = sorted(phonenumbers.SUPPORTED_REGIONS - set(FIRST_REGIONS))
    for region in rest:
        try:
            if phonenumbers.is_valid_number(phonenumbers.parse(candidate, region)):
                return True
        except phonenumbers.NumberParseException:
            continue
    return False


def _matched_first_regions(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Presidio's matcher for its eight regions, on the candidate and a little around it."""
    lo, hi = max(0, start - 2), min(len(text), end + 2)
    window = text[lo:hi]
    spans = set()
    for region in FIRST_REGIONS:
        for match in PhoneNumberMatcher(window, region, leniency=phonenumbers.Leniency.VALID):
            spans.add((lo + match.start, lo + match.end))
    return sorted(spans)


def _phone_context(text: str, start: int) -> bool:
    """A phone word shortly before the digit run, with no reference word (order, invoice,
    ticket...) nearer to it, and the run not written as a reference (`#2640684`)."""
    before = text[max(0, start - _CONTEXT) : start]
    if before.rstrip().endswith("#"):
        return False
    phone = [m.end() for m in _PHONE_WORD.finditer(before)]
    reference = [m.end() for m in _REFERENCE_WORD.finditer(before)]
    return bool(phone) and (not reference or phone[-1] > reference[-1])


def find_phones(text: str) -> list[Span]:
    """Phone numbers in a text, scored (see the module doc)."""
    found: list[Span] = []
    for match in _CANDIDATE.finditer(text):
        start, end = match.span()
        while end > start and text[end - 1] in ")(":  # "(call 555 0100)"
            if text[end - 1] == ")" and text.count("(", start, end) >= text.count(")", start, end):
                break
            end -= 1
        if text[start] == "(" and ")" not in text[start:end]:
            start += 1
        candidate = text[start:end]
        if _NOT_PHONE.fullmatch(candidate):
            continue
        digits = sum(c.isdigit() for c in candidate)
        if digits < 6 or digits > 17:
            continue
        if _INTERNATIONAL.match(candidate):
            score = _international(candidate)
            if score:
                found.append(Span(start, end, ENTITY, score))
            continue
        in_context = _phone_context(text, start)
        first = _matched_first_regions(text, start, end)
        if first:
            score = NATIONAL_IN_CONTEXT if in_context else NATIONAL
            found += [Span(s, e, ENTITY, score) for s, e in first]
        elif in_context and 6 <= digits <= 15 and _valid_in_any_region(candidate):
            found.append(Span(start, end, ENTITY, NATIONAL_IN_CONTEXT))
    return found


class PhoneNumberRecognizer(EntityRecognizer):
    """Presidio recognizer for `find_phones`. Presidio's context enhancer raises a national
    number near its context words (phone, number, call...) as it did for its own recognizer."""

    CONTEXT = ["phone", "number", "telephone", "cell", "cellphone", "mobile", "call"]

    def __init__(self) -> None:
        super().__init__(
            supported_entities=[ENTITY], name="PhoneNumberRecognizer", context=self.CONTEXT
        )

    def load(self) -> None:
        return None

    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
    ) -> list[RecognizerResult]:
        return [
            RecognizerResult(
                s.entity,
                s.start,
                s.end,
                s.score,
                AnalysisExplanation(recognizer=self.name, original_score=s.score),
            )
            for s in find_phones(text)
        ]
