"""IBANs of every country that issues them, as a country-format registry says.

Presidio's IbanRecognizer knows the formats of SWIFT's registry of some years ago: IBANs of the
countries that took IBANs up since, or that use them without SWIFT's listing (El Salvador,
Iran, Algeria, Morocco, Mozambique, much of francophone Africa), are left whole.
`find_ibans` (the table's `IbanRegistryRecognizer`) takes IBAN_CODE over with the registry of `schwifty` (PyPI, MIT, kept
up with SWIFT's IBAN registry and with the countries outside it), extracted once into
`screening/data/iban_formats.tsv` (shipped in the repo; the run time never imports schwifty):

    country <TAB> IBAN length <TAB> BBAN format (SWIFT's notation: `4!n` four digits, `a`
    upper-case letters, `c` letters or digits)

A candidate is two letters, two check digits and the rest, in upper or lower case (`de89 3704
...`, as a form or a chat writes it; not the two mixed) and any grouping (ungrouped, in fours, or in groups of other sizes
split by single spaces or dashes: `DE89 37040044 0532013000`); it is an IBAN at 1.0 when its
country is in the registry, its length is the country's, its BBAN (upper-cased) has the
country's format and ISO 13616's mod-97 check holds. Rebuild
the file (its first line names the schwifty version) with:

    pip install schwifty==VERSION && python screening/data/build/update_iban_formats.py
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from screening.redact import Span

ENTITY = "IBAN_CODE"
SCORE = 1.0
PATH = Path(__file__).resolve().parents[1] / "data" / "iban_formats.tsv"

_CANDIDATE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ \-]?[A-Za-z0-9]){10,32}")
# The start of an IBAN right before a position: digits there are its account part, no phone
# or card (`BA39 A291 2345 6789`, even when the IBAN as a whole is malformed).
_HEAD = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ \-]?[A-Za-z0-9])*[ \-]?$")
_SPEC = re.compile(r"(\d+)(!?)([nac])")
_CLASSES = {"n": "[0-9]", "a": "[A-Z]", "c": "[A-Z0-9]"}


def iban_check_digits(country: str, bban: str) -> str:
    """ISO 13616 check digits: 98 minus (BBAN + country + "00", letters as numbers) mod 97."""
    numeric = "".join(str(int(c, 36)) for c in (bban + country + "00").upper())
    return f"{98 - int(numeric) % 97:02d}"


def iban_valid(iban: str) -> bool:
    """ISO 13616's mod-97 check (any country, any length from 12 to 34)."""
    compact = re.sub(r"[\s\-]", "", iban).upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{8,30}", compact):
        return False
    numeric = "".join(str(int(c, 36)) for c in compact[4:] + compact[:4])
    return int(numeric) % 97 == 1


def after_iban_head(text: str, start: int) -> bool:
    """The digits at `start` continue an IBAN-shaped run of capitals and digits that is shorter
    than its country's IBANs (after a whole IBAN, a card or phone number may follow)."""
    head = _HEAD.search(text, max(0, start - 40), start)
    if head is None:
        return False
    known = formats().get(head.group()[:2].upper())
    return known is None or len(re.sub(r"[ \-]", "", head.group())) < known[0]


def bban_regex(spec: str) -> str:
    """`4!n4!n12!c` -> `[0-9]{4}[0-9]{4}[A-Z0-9]{12}` (without `!`: up to that many)."""
    return "".join(
        f"{_CLASSES[kind]}{{{n}}}" if fixed else f"{_CLASSES[kind]}{{1,{n}}}"
        for n, fixed, kind in _SPEC.findall(spec)
    )


@cache
def formats() -> dict[str, tuple[int, re.Pattern[str]]]:
    """Country code -> (IBAN length, BBAN pattern), from the shipped registry."""
    out = {}
    for line in PATH.read_text().splitlines():
        if line and not line.startswith("#"):
            country, length, spec = line.split("\t")
            out[country] = (int(length), re.compile(bban_regex(spec)))
    return out


def is_iban(compact: str) -> bool:
    """An IBAN without separators, of a registered country, length and format."""
    known = formats().get(compact[:2])
    if known is None or len(compact) != known[0]:
        return False
    return bool(known[1].fullmatch(compact[4:])) and iban_valid(compact)


def find_ibans(text: str) -> list[Span]:
    """IBANs in a text: the whole candidate, or its first letters and digits that make the
    country's length (`DE89 3704 0044 0532 0130 00 2 days`); the search goes on after an IBAN
    (another may follow it on the line) or after a candidate's first letter."""
    found = []
    match = _CANDIDATE.search(text)
    while match is not None:
        start, value = match.start(), match.group()
        end = _iban_end(text, start, value)
        if end:
            found.append(Span(start, end, ENTITY, SCORE))
        match = _CANDIDATE.search(text, end or start + 1)
    return found


def _iban_end(text: str, start: int, value: str) -> int:
    """Where the IBAN that starts the candidate `value` (at `start`) ends; 0 when it is none."""
    known = formats().get(value[:2].upper())
    if known is None:
        return 0
    end, count = 0, 0
    for i, c in enumerate(value):  # the end of the country's length of letters and digits
        if c.isalnum():
            count += 1
            if count == known[0]:
                end = start + i + 1
                break
    if not end or (end < len(text) and text[end].isalnum()):
        return 0
    compact = re.sub(r"[ \-]", "", text[start:end])
    if not (compact.isupper() or compact.islower()):  # `LV80 bANK ...`: no IBAN as written
        return 0
    return end if is_iban(compact.upper()) else 0
