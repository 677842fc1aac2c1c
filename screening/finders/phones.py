"""Phone numbers of every region libphonenumber knows.

Presidio's PhoneRecognizer runs libphonenumber's matcher over the whole text once per region, for
eight regions (US, GB, DE, FR, IL, IN, CA, BR): `451 5986` after "Phone:" or a UK mobile outside
the ranges it calls valid (`+447700 208 815`) stay. `find_phones` (the table's `PhoneNumberRecognizer`) takes PHONE_NUMBER over:

- libphonenumber runs only on candidates: runs of 6-15 digits, with the separators people write
  (spaces, dots, dashes, slashes, parentheses) and an optional `+` or `00` in front;
- a number in international form (`+<country code> ...` or `00<country code> ...`) is a phone
  anywhere: 0.7 when libphonenumber calls it valid, 0.5 when only its length is possible;
- a number in national form is a phone at 0.4 when valid for one of those eight regions (as
  Presidio found it; Presidio's context words raise it), and at 0.6 when a phone word precedes
  it (phone, tel, mobile, call, whatsapp, fax, and the same in other languages) and it is valid
  for any of libphonenumber's 245 regions (answers cached): the whole run, where the eight
  regions' matcher took only a part of it (`8 (771) 000 9998`) or none; the eight are asked
  again, as their matcher leaves numbers that parse as valid there (a German mobile with its
  country code and no `+`, `4917612345678`; `benchmarks/phone_forms.py`, 2026-11-25: of 22,765
  valid numbers of every region in six written forms after `Mobile:`, asking only the other
  regions left 8, all German mobiles so written; asking the eight too leaves none);
- a run in national form with no phone word near it, valid in some region, is a phone at 0.4
  when it is written as a phone and stands on its own (`_written_as_phone`): an area code in
  parentheses, a trunk 0, groups of 2-4 digits (`06-12-34-56-78`, `20 12 34 56`), or, as a
  field of a signature, a form or a list, thousands-like groups or a whole run (`Jan Novák,
  601 123 456, ...`); never inside a URL or a run of numbers, nor a date, a postcode, a card's
  groups of four or a round number (`phones-unlabelled`, 2026-11-30: the mobile numbers of
  validator.js's 149 locales in a signature or a field, 73% found before, 94% after; no new
  finding on any clean corpus);
- a run of 11-13 digits with no separator, standing on its own, that is a valid mobile number
  of some country when read with a `+` (its country code written, the `+` left out:
  `380661234567`, `962777866254`), is a phone at 0.4 anywhere, a sentence included;
- a run written in a shape only phone numbers take is a phone at 0.4 standing on its own, valid
  or not (a generator's random digits, an area code no plan has: Faker's `387.978.9328`):
  North America's 3-3-4 with one separator or its area code in parentheses (`1 (169)
  777-8188`), or an area code in parentheses and two or more groups after it (`8 (877)
  893-28-79`), a trunk 8 before a three-digit code (`8 916 123 45 67`), an area code before a
  slash (`87/789-3287`) or Brazil's two digits before 4-4 or 5-4 (`11 91234-5678`); 9-13
  digits, no date or years in it (`benchmarks/faker_phones.py`, 2026-11-30: of Faker's
  numbers of 30 locales in frames with no phone word, 14.7% left before, 8.2% after, with the
  extensions and the `(+358)` below; no new finding on any clean corpus);
- in a sentence too, standing on its own and not in a formula or a list of numbers
  (`_local_or_mobile`), a phone at 0.4: a local number with no area code valid in some region
  (`346-7351`, `7802 3458`: not a range, round numbers, bits, years, a ZIP after a state), a
  valid national mobile in one run (China's `13812345678`, India's `9812345678`), and three
  groups of three that are a valid mobile of a country writing them so (`601 809 679`), unless
  a word that counts follows (`612 345 678 people`) (2026-12-01: Faker's numbers left 8.2% ->
  3.7%; 225,902 ten-line windows of installed packages' files: no new finding, 90 windows'
  false findings gone with the new reference words);
- a run of 6 or more digits is read as after a phone word (valid in some region: a phone at
  0.6) where the text around it says it is a contact detail, with no reference word before it:
  when to call written right after it (`..., Mon-Fri`, `... works until Friday`, `... after
  6pm`, `..., du lundi au vendredi`: a weekday, weekdays, hours, a range of days, in English,
  German, French, Spanish, Italian, Dutch, Portuguese; no word that counts between, `1500000
  visitors by Monday` is none), or alone on its line one to three lines after a letter's closing (`Best regards,`,
  `Mit freundlichen Grüßen`, `--`) (2026-12-01: `phones-unlabelled` left 37 -> 2 of 513, test);
- a country code in parentheses (`(+358) 40 1234567`) opens an international number;
- an extension written right after a number (`x123`, `ext. 42`), or on to it (`9328x792`), is
  part of it;
- a run in national form with a reference word nearer before it than any phone word (order,
  invoice, account, version, timestamp, total, price, card, ISSN, pp., Std...) is no phone, nor
  is one that continues an IBAN, nor one with a year in parentheses or two years in it and no
  phone word (a citation's `45 (2019) 123-145`, a season's `12 2019-2020`);
- `number` is a phone word for a run of 7 or more digits when no reference word is in the window
  and it is not `number of` (`My CN number is 13812345678`);
- right after a phone word (`Phone: 40123`, `tel. 20.12.34`: only punctuation, `number`, `no.`
  or `is` between) a run of 4-5 digits valid in some region is a phone too (small territories'
  numbers: Niue, Saint Helena, Tokelau), as is a run written like a date; a bare 19xx/20xx is
  taken for a year;
- a number in international form that libphonenumber calls impossible (`+420123456789`,
  `+390549612345678`) is still a phone at 0.6 after a phone word when it has E.164's shape: a
  country calling code libphonenumber knows and 8-15 digits in all; with no phone word, at 0.4
  when written with a `+`, standing on its own and not a round number (a plan changed since it
  was written: Benin's eight digits before 2024, `+22990123456`), with up to 17 digits (a trunk
  prefix run on: `+37805496123456789`).
"""

from __future__ import annotations

import re
from functools import lru_cache

import phonenumbers
from phonenumbers import PhoneNumberMatcher, ValidationResult

from screening.finders.ibans import after_iban_head
from screening.finders.phone_words import phone_context, said_to_be_contact
from screening.redact import Span

ENTITY = "PHONE_NUMBER"
INTERNATIONAL_VALID, INTERNATIONAL_POSSIBLE = 0.7, 0.5
NATIONAL, NATIONAL_IN_CONTEXT = 0.4, 0.6
FIRST_REGIONS = ("US", "GB", "DE", "FR", "IL", "IN", "CA", "BR")  # Presidio's defaults

_YEAR = re.compile(r"(?:19|20)\d\d")
_YEAR_IN_PARENTHESES = re.compile(r"\((?:19|20)\d\d\)")  # a citation's `45 (2019) 123-145`
# A run may open with its country code in parentheses (`(+30) 210 1234567`); it ends where no
# letter or digit follows, or where an extension is written on to it (`387.978.9328x792`:
# `_with_extension` takes it).
_CANDIDATE = re.compile(
    r"(?<![\w+])(?:\(?\+|\b00)?\(?\d[\d()]*(?:(?:[ .\-/]|\u00a0| - )\(?\d[\d()]*)*"
    r"(?!(?!(?:x|ext\.?)\d)\w)"
)
_INTERNATIONAL = re.compile(r"\(?\+|00[1-9]")  # `(+358) 40 1234567` too
# Digit runs that are something else: IPv4 addresses, decimals, dates and times.
_NOT_PHONE = re.compile(
    r"\d{1,3}(?:\.\d{1,3}){3}|\d+\.\d+|\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:\s.*)?|"
    r"\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}|.*\d:\d\d.*"
)
# ... of which a run right after a phone word may still be a phone (`tel. 20.12.34`)
_DATE = re.compile(r"\d{1,2}([-/.])\d{1,2}\1\d{2}")


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
def _e164_digits(candidate: str, longest: int = 15) -> str:
    """The digits after `+` (or `00`) where they are a country calling code libphonenumber knows
    and 8-15 (E.164's most) or `longest` digits in all; "" where they are not."""
    digits = re.sub(r"\D", "", candidate[2:] if candidate.startswith("00") else candidate)
    if not 8 <= len(digits) <= longest:
        return ""
    known = phonenumbers.COUNTRY_CODE_TO_REGION_CODE
    return digits if any(int(digits[:n]) in known for n in (1, 2, 3)) else ""


_REGIONS = (*FIRST_REGIONS, *sorted(phonenumbers.SUPPORTED_REGIONS - set(FIRST_REGIONS)))


@lru_cache(maxsize=8192)
def _valid_in_any_region(candidate: str) -> bool:
    """Valid as written in some region: the eight first, each parse on its own. Not only the
    regions the eight regions' matcher missed: its VALID leniency also drops numbers that parse
    as valid (`4917612345678`, country code and no `+`, is a valid German mobile to `parse` and
    nothing to the matcher for DE)."""
    for region in _REGIONS:
        try:
            if phonenumbers.is_valid_number(phonenumbers.parse(candidate, region)):
                return True
        except phonenumbers.NumberParseException:
            continue
    return False


def _matched_first_regions(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Presidio's matcher for its eight regions, on the candidate and a little around it (its
    extension whole: the matcher reads one, and a cut one, `x7` of `x792`, would end the span)."""
    extension = _EXTENSION.match(text, end)
    lo, hi = max(0, start - 2), min(len(text), (extension.end() if extension else end) + 2)
    window = text[lo:hi]
    spans = set()
    for region in FIRST_REGIONS:
        for match in PhoneNumberMatcher(window, region, leniency=phonenumbers.Leniency.VALID):
            spans.add((lo + match.start, lo + match.end))
    return sorted(spans)


def _no_date(text: str, start: int, end: int) -> bool:
    """No date, time or year in the run (`1/16/2020 5:24 AM`, `1999 51 Mon`, `2006-2010`)."""
    candidate = text[start:end]
    groups = _GROUPS.findall(candidate)
    if len(groups) == 2 and any(_YEAR.fullmatch(g) for g in groups):
        return False
    if _DATE_GROUPS.search(candidate) or _YEARS.search(candidate) or "/" in candidate:
        return False
    return not re.match(r"[:.]\d", text[end : end + 2])


_SEPARATORS = re.compile(r"[ .\-/\u00a0]+")
_GROUPS = re.compile(r"\d+")
_THOUSANDS = re.compile(r"[1-9]\d{0,2}(?:([ .\u00a0])\d{3})+")  # `612 345 678`, `1.234.567`
_POSTCODE = re.compile(r"\d{5}[ \-]\d{3,4}")  # a ZIP+4 (`92553-4313`), a CEP (`01037-010`)
_DATE_GROUPS = re.compile(r"\d{1,2}\D+\d{1,2}\D+(?:19|20)\d\d|(?:19|20)\d\d\D+\d{1,2}\D+\d{1,2}")
_YEARS = re.compile(r"(?:19|20)\d\d\s*[-/\u2013]\s*(?:19|20)\d\d")  # `2019-2024` in a CV
_FIELD_BEFORE = (":", ",", ";", "|", "-", "\u2013")
_FIELD_AFTER = (",", ";", "/", "|", ")")
_COUNTING = "01234567890123456789 98765432109876543210"


def _stands_alone(text: str, start: int, end: int) -> bool:
    """After a space, a label or a comma; not inside a URL, a path, an identifier or a run of
    numbers."""
    before_char = text[start - 1] if start else " "
    after = text[end : end + 2]
    if not (before_char.isspace() or before_char in "(:,;"):
        return False  # inside a URL, a path or an identifier
    if after[:1] in ("/", "@") or (after[:1] in ".-" and after[1:2].isalnum()):
        return False
    # not the rest of a run of numbers (`EE38 2200 2210  014 5686`)
    return not re.search(r"\d[ \t]*$", text[max(0, start - 4) : start])


_MOBILE_TYPES = (
    phonenumbers.PhoneNumberType.MOBILE,
    phonenumbers.PhoneNumberType.FIXED_LINE_OR_MOBILE,
)


@lru_cache(maxsize=8192)
def _mobile_in(candidate: str, regions: tuple[str | None, ...]) -> bool:
    """A valid mobile number of one of `regions`, read in its national form (`None`: a number
    written with its `+` and country code)."""
    for region in regions:
        try:
            parsed = phonenumbers.parse(candidate, region)
        except phonenumbers.NumberParseException:
            continue
        if (
            phonenumbers.is_valid_number(parsed)
            and phonenumbers.number_type(parsed) in _MOBILE_TYPES
        ):
            return True
    return False


def _mobile_with_country_code(candidate: str) -> bool:
    """11-13 digits in one run, a country calling code first and no `+` (`380661234567`,
    `962777866254`), not a round number, that libphonenumber calls a valid mobile number of that
    country."""
    if not (candidate.isdigit() and 11 <= len(candidate) <= 13) or candidate[0] == "0":
        return False
    if candidate.endswith("000"):
        return False  # a round number (`17500000000 tokens`)
    return _mobile_in("+" + candidate, (None,))


def _plus_and_country_code(text: str, start: int, end: int) -> bool:
    """`+`, a country calling code and 8-17 digits in all, standing on its own, not a round
    number: a phone as E.164 writes one, even where libphonenumber's plan for that country no
    longer takes it (`+22920293092`: Benin's eight-digit numbers before 2024; Mexico's mobiles
    with their old `1`; Jamaica's `+8764511274`, the `1` of North America left out), or with
    more digits than E.164's 15 (a trunk prefix or an extension run on: validator.js takes
    San Marino's `+3780549` before a mobile's ten digits, 17 in all)."""
    candidate = text[start:end]
    digits = _e164_digits(candidate, 17) if candidate.startswith("+") else ""
    if not digits and candidate.startswith("+") and not _international(candidate):
        # a North American number of the Caribbean with its area code for a country code and
        # the `1` left out (Jamaica's `+876 102 1234`), valid once the `1` is read
        digits = re.sub(r"\D", "", candidate)
        digits = digits if len(digits) == 10 and _international("+1" + digits) else ""
    return bool(digits) and not digits.endswith("000") and _stands_alone(text, start, end)


# Shapes only phone numbers take, whatever libphonenumber says of the digits (a generator's
# numbers, `387.978.9328`, and a plan's changes are invalid to it): North America's 3-3-4 with
# one separator or its area code in parentheses (a `1`, `+1` or `001` before it), an area
# code in parentheses followed by two or more groups (`8 (877) 893-28-79`), the trunk `8` of
# Russia, Belarus and Kazakhstan before a three-digit code (`8 916 123 45 67`), and an area
# code before a slash (Hungary's and Austria's `87/789-3287`, `38/347 0174`), and Brazil's
# two-digit area code before 4-4 or 5-4 (`11 91234-5678`).
_PHONE_SHAPES = re.compile(
    r"(?:(?:\+|00)?1[ .\-]?)?(?:\(\d{3}\) ?|\d{3}([.\-]))\d{3}(?(1)\1|[ .\-])\d{4}"
    r"|(?:\+?\d{1,3}[ .\-]?)?\(\d{2,5}\)[ .\-]?\d{2,4}(?:[ .\-]\d{2,4})+"
    r"|8[ \-]\d{3}[ \-]\d{3}(?:[ \-]\d{2}[ \-]\d{2}|[ \-]\d{4})"
    r"|\d{1,4}/\d{3,4}[ \-]\d{3,4}"
    r"|\d{2} \d{4,5}-\d{4}"
)
# Local numbers as people write them with no area code (`346-7300`, `2374-0954`, `7802 3458`),
# national mobiles in one run (China's `13812345678`, India's `9876543210`) and mobiles in
# threes (Poland's, Portugal's, Spain's `601 809 679`, which thousands share).
_LOCAL = re.compile(r"\d{3}-\d{4}|\d{4}[\- ]\d{4}")
_NATIONAL_MOBILES = ((re.compile(r"1[3-9]\d{9}"), ("CN",)), (re.compile(r"[6-9]\d{9}"), ("IN",)))
_STATE_BEFORE = re.compile(r"\b[A-Z]{2},? $")
_OPERATOR_BEFORE = re.compile(r"(?:[=+\-*/%^<>(\[{]|\d,)[ \t]*$")
_OPERATOR_AFTER = re.compile(r"[ \t]*[=+\-*/%^<>)\]}]|\.[^\s]|,\s*\d")
_MOBILE_IN_THREES = re.compile(r"\d{3} \d{3} \d{3}")
_THREES_REGIONS = ("PL", "PT", "ES", "CZ", "SK", "AO")
# The word after a number in threes that makes it no count of something (`... 601 809 679 for
# later`, `... is best`); any other word after it is read as a unit (`612 345 678 people`).
_NEXT_WORD = re.compile(r"[ \u00a0]+([^\W\d_]+)")
_NOT_A_UNIT = frozenset(
    {"and", "as", "at", "after", "before", "for", "if", "is", "on", "or", "then", "to"}
    | {"until", "was", "when", "will"}
)


def _phone_shaped(text: str, start: int, end: int) -> bool:
    """Written in a shape only phone numbers take (`_PHONE_SHAPES`), standing on its own, with
    9-13 digits and no date in it."""
    candidate = text[start:end]
    digits = sum(c.isdigit() for c in candidate)
    return (
        9 <= digits <= 13
        and bool(_PHONE_SHAPES.fullmatch(candidate))
        and not _DATE_GROUPS.search(candidate)
        and not _YEARS.search(candidate)
        and _stands_alone(text, start, end)
    )


def _range(first: str, second: str) -> bool:
    """`1090-1092`, `200-1200`, `1920 1080`, `1100 1100`: a range of house numbers, pages or
    codes, a pair of round numbers, bits."""
    if not set(first + second) - {"0", "1"} or (first[-1] == "0" and second[-1] == "0"):
        return True
    return 0 < int(second) - int(first) <= 1000


def _local_or_mobile(text: str, start: int, end: int) -> bool:
    """A number in a sentence as its country writes it with no phone word, standing on its own
    (not a round number, a counting run, years or a range: `1090-1092 Berkeley St`): a local
    number of 7-8 digits in two groups valid in some region (`346-7300`, `7802 3458`); one
    run that is a valid national mobile of China or India; three groups of three that are a
    valid mobile of a country writing them so (`601 809 679`)."""
    candidate = text[start:end]
    digits = "".join(_GROUPS.findall(candidate))
    if digits in _COUNTING or digits.endswith("000") or _YEARS.fullmatch(candidate):
        return False
    if not _stands_alone(text, start, end):
        return False
    if _LOCAL.fullmatch(candidate):
        if _STATE_BEFORE.search(text, max(0, start - 8), start):
            return False  # a ZIP code written with four digits (`LOS ANGELES CA 9151-2100`)
        first, second = _GROUPS.findall(candidate)
        if _YEAR.fullmatch(second) or _range(first, second):
            return False  # a standard's edition (`IEEE 754-2008`), a range (`200-1200`)
        return _valid_in_any_region(candidate)
    if _MOBILE_IN_THREES.fullmatch(candidate):
        word = _NEXT_WORD.match(text, end)
        if word and word.group(1).lower() not in _NOT_A_UNIT:
            return False  # thousands of something (`612 345 678 people`)
        return _mobile_in(candidate, _THREES_REGIONS)
    if _OPERATOR_BEFORE.search(text, max(0, start - 8), start) or _OPERATOR_AFTER.match(text, end):
        return False  # a constant in code or a formula (`x = 15720318185*2**(1/3)`)
    return any(
        shape.fullmatch(candidate) and _mobile_in(candidate, regions)
        for shape, regions in _NATIONAL_MOBILES
    )


def _written_as_phone(text: str, start: int, end: int) -> bool:
    """Whether a digit run with no phone word near it is written as phone numbers are in their
    own country, standing on its own (after a space, a label or a comma; not inside a URL, a
    path or a run of numbers; no group of one digit, no date, postcode or counting run):

    - an area code in parentheses (`(030) 1234567`) or a trunk 0 (`040 123 4567`, `0612345678`);
    - three or more groups of 2-4 digits with one kind of separator (`20 12 34 56`,
      `601-123-456`), but not groups of four only (a card's shape) or thousands (`612 345 678`);
    - three or more groups, two of 3+ digits (`9123 4567`) or 8-13 digits not grouped (and not
      a round number), as a field of
      a form, a list or a signature: alone on its line after a short line of words, or between
      a label (`Kontakt:`) or a comma and the line's end or the next comma (`Jan Novák, 601 123
      456, jan@example.cz`)."""
    candidate = text[start:end]
    if not _stands_alone(text, start, end):
        return False
    groups = _GROUPS.findall(candidate)
    digits = "".join(groups)
    if min(len(g) for g in groups) < 2 or digits in _COUNTING:
        return False
    if _DATE_GROUPS.fullmatch(candidate.strip("()")) or _POSTCODE.fullmatch(candidate):
        return False
    if _YEARS.fullmatch(candidate.strip("()")):
        return False
    if candidate.startswith("(") or (candidate[0] == "0" and candidate[1:2] != "0"):
        return True
    whole = len(groups) == 1 and 8 <= len(digits) <= 13 and not digits.endswith("000")
    pair = len(groups) == 2 and min(len(g) for g in groups) >= 3  # `9123 4567` in a field
    if not (whole or pair) and (len(groups) < 3 or len(set(_SEPARATORS.findall(candidate))) != 1):
        return False
    grouped = len(groups) >= 3 and all(2 <= len(g) <= 4 for g in groups[1:])
    if grouped and not _THOUSANDS.fullmatch(candidate):
        return {len(g) for g in groups} != {4}
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    before = text[line_start:start].rstrip()
    rest = text[end : len(text) if line_end == -1 else line_end].strip()
    if not before and not rest:  # a signature's line, after a short line of words
        previous = text[text.rfind("\n", 0, max(0, line_start - 1)) + 1 : max(0, line_start - 1)]
        return 0 < len(previous) <= 60 and any(c.isalpha() for c in previous)
    return (before.endswith(_FIELD_BEFORE) or not before) and (
        not rest or rest.startswith(_FIELD_AFTER)
    )


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
        digits = sum(c.isdigit() for c in candidate)
        if digits < 4 or digits > 17:
            continue
        near, adjacent, reference = phone_context(text, start, digits)
        if not (near or reference) and digits >= 6 and _no_date(text, start, end):
            near = said_to_be_contact(text, start, end)
        if _NOT_PHONE.fullmatch(candidate) and not (adjacent and _DATE.fullmatch(candidate)):
            continue
        if after_iban_head(text, start):
            continue
        if _INTERNATIONAL.match(candidate):
            score = _international(candidate)
            if not score and near and _e164_digits(candidate):
                score = NATIONAL_IN_CONTEXT
            elif not score and _plus_and_country_code(text, start, end):
                score = NATIONAL
            if score:
                found.append(Span(start, end, ENTITY, score))
            continue
        if digits < 6:
            short = adjacent and not _YEAR.fullmatch(candidate)
            if short and _valid_in_any_region(candidate):
                found.append(Span(start, end, ENTITY, NATIONAL_IN_CONTEXT))
            continue
        if reference or (not near and _YEAR_IN_PARENTHESES.search(candidate)):
            continue  # a citation's `45 (2019) 123-145`
        if not near and _YEARS.search(candidate):
            continue  # a season's `12 2019-2020`
        first = _matched_first_regions(text, start, end)
        part = bool(first) and (first[0][0] > start or first[-1][1] < end)
        part = part and text.count("(", start, end) == text.count(")", start, end)
        if near and (part or not first) and digits <= 15 and _valid_in_any_region(candidate):
            found.append(Span(start, end, ENTITY, NATIONAL_IN_CONTEXT))
        elif (
            (part or not first)
            and (
                (
                    7 <= digits <= 13
                    and _written_as_phone(text, start, end)
                    and _valid_in_any_region(candidate)
                )
                or _phone_shaped(text, start, end)
                or _local_or_mobile(text, start, end)
            )
        ) or (_mobile_with_country_code(candidate) and _stands_alone(text, start, end)):
            found.append(Span(start, end, ENTITY, NATIONAL))
        elif first:
            score = NATIONAL_IN_CONTEXT if near else NATIONAL
            found += [Span(s, e, ENTITY, score) for s, e in first]
    return [_with_extension(text, span) for span in found]


# An extension after a number: `x123`, `ext. 42`, `extension 7`, `poste 12`, `Durchwahl 30`
_EXTENSION = re.compile(
    r",?[ \u00a0]*(?:x|ext\.?|extn\.?|extension|poste|durchwahl|dw\.?)[ \u00a0]*:?[ \u00a0]*"
    r"\d{1,6}(?![\w])",
    re.IGNORECASE,
)


def _with_extension(text: str, span: Span) -> Span:
    """The span, with the extension written right after it (its digits reach the person too)."""
    extension = _EXTENSION.match(text, span.end)
    return Span(span.start, extension.end(), span.entity, span.score) if extension else span
