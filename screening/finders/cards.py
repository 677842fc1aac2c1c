"""Payment card numbers of every network and length 12-19 that pass the Luhn check.

Presidio's CreditCardRecognizer knows one grouping (4-4-4-4 style, 13-16 digits starting 1, 3, 4,
5[0-5] or 6): it misses 19-digit Visa, 12-digit Maestro, 15-digit JCB and the Mastercard 2-series.
`find_cards` (the table's `CardNumberRecognizer`) takes CREDIT_CARD over from it:

- a candidate is a run of 12-19 digits, ungrouped or grouped by single spaces or dashes, not glued
  to a letter, `+` or another number (a longer run is tried group by group);
- its prefix and length must belong to a card network (the IIN ranges below) and it must pass
  the Luhn check, so nine in ten random order numbers are out at once;
- the score: 1.0 near a card word (card, visa, Kreditkarte, tarjeta...), 0.8 otherwise; a
  12-digit ungrouped number with no card word, or a number after an order/invoice/tracking word
  and no card word, scores 0.3 (below the screen's 0.5).
"""

from __future__ import annotations

import re

from screening.finders.ibans import after_iban_head
from screening.redact import Span

ENTITY = "CREDIT_CARD"
WITH_CONTEXT, PLAIN, WEAK = 1.0, 0.8, 0.3

# (IIN prefix range, lengths): ISO/IEC 7812 issuer ranges of the networks in use.
_NETWORKS: tuple[tuple[int, int, range], ...] = (
    (1, 1, range(15, 16)),  # UATP
    (1800, 1800, range(15, 16)),  # JCB (old 15-digit)
    (2131, 2131, range(15, 16)),  # JCB (old 15-digit)
    (2200, 2204, range(16, 20)),  # Mir
    (2221, 2720, range(16, 17)),  # Mastercard 2-series
    (30, 30, range(14, 20)),  # Diners Club
    (34, 34, range(15, 16)),  # American Express
    (35, 35, range(15, 20)),  # JCB
    (36, 36, range(14, 20)),  # Diners Club
    (37, 37, range(15, 16)),  # American Express
    (38, 39, range(14, 20)),  # Diners Club
    (4, 4, range(13, 20)),  # Visa (13, 16, 19), Visa Electron, Cartes Bancaires
    (50, 50, range(12, 20)),  # Maestro, Dankort, Elo, Verve
    (51, 55, range(16, 20)),  # Mastercard
    (56, 69, range(12, 20)),  # Maestro, Discover, UnionPay, RuPay, Troy, Elo, Hipercard
    (604, 604, range(12, 20)),  # Maestro (Switch) written with a leading zero
    (81, 81, range(16, 20)),  # UnionPay (81xx, 16-19 digits), RuPay
    (82, 82, range(16, 17)),  # RuPay
    (9792, 9792, range(16, 17)),  # Troy
)

_RUN = re.compile(r"(?<![\w+.,/\-])\d+(?:[ \-]\d+)*(?![\w]|[.,/\-]\d)")
_CARD_WORDS = re.compile(
    r"card|visa|master\s*card|amex|american express|discover|jcb|diners|maestro|unionpay|"
    r"union pay|rupay|\bmir\b|elo|hipercard|dankort|\bcc\b|\bpan\b|kart[ea]|tarjeta|carta|"
    r"carte|cart[ãa]o|kaart|kreditkarte|credit|debit|payment|paid|pay with|charged?",
    re.IGNORECASE,
)
_NOT_CARD_WORDS = re.compile(
    r"order|invoice|tracking|shipment|parcel|ref(?:erence)?\b|ticket|booking|confirmation|"
    r"case|transaction|serial|imei|isbn|barcode|\bean\b|\bupc\b|\bpo\b|account|acct|customer",
    re.IGNORECASE,
)
_CONTEXT = 40


def luhn_valid(digits: str) -> bool:
    """Whether the last digit of `digits` is their Luhn check digit (cards, IMEIs)."""
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def network_fits(digits: str) -> bool:
    """The number's prefix and length belong to a card network."""
    for low, high, lengths in _NETWORKS:
        width = len(str(low)) + (digits.startswith("0") and low == 604)
        if width <= len(digits) and low <= int(digits[:width]) <= high and len(digits) in lengths:
            return True
    return False


def is_card_number(digits: str) -> bool:
    return 12 <= len(digits) <= 19 and network_fits(digits) and luhn_valid(digits)


def find_cards(text: str) -> list[Span]:
    """Card numbers in a text, scored (see the module doc)."""
    found: list[Span] = []
    for run in _RUN.finditer(text):
        if sum(c.isdigit() for c in run.group()) < 12:
            continue
        taken = -1  # cards in one run do not overlap (`4012888888881881 4012 8888 8888 1881`)
        for start, end in _windows(run):
            value = text[start:end]
            digits = re.sub(r"\D", "", value)
            if start < taken or not is_card_number(digits):
                continue
            if after_iban_head(text, start):
                continue
            found.append(Span(start, end, ENTITY, _score(text, start, value, digits)))
            taken = end
    return found


def _windows(run: re.Match) -> list[tuple[int, int]]:
    """The whole run, or (when it holds more than 19 digits) each run of whole groups that could
    be a card: from left to right, the longest first from each group."""
    digits = sum(c.isdigit() for c in run.group())
    if digits <= 19:
        return [run.span()]
    groups = [
        (m.start() + run.start(), m.end() + run.start()) for m in re.finditer(r"\d+", run.group())
    ]
    windows = []
    for i in range(len(groups)):
        count, starting_here = 0, []
        for j in range(i, len(groups)):
            count += groups[j][1] - groups[j][0]
            if count > 19:
                break
            if count >= 12:
                starting_here.append((groups[i][0], groups[j][1]))
        windows += reversed(starting_here)
    return windows


def _score(text: str, start: int, value: str, digits: str) -> float:
    before = text[max(0, start - _CONTEXT) : start]
    if _CARD_WORDS.search(before):
        return WITH_CONTEXT
    if _NOT_CARD_WORDS.search(before):
        return WEAK
    if len(digits) == 12 and value.isdigit():
        return WEAK
    return PLAIN
