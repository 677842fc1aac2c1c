"""IMEIs: the 15-digit serial numbers of mobile phones (3GPP TS 23.003, section 6.2.1).

An IMEI identifies one handset, and through it the person who carries it: GDPR guidance counts
device identifiers as personal data, and support tickets about lost, stolen or blocked phones
quote them ("the IMEI is 35-209900-176148-1"). Presidio has no recognizer for them.

An IMEI is a Type Allocation Code (8 digits, the first two its reporting body), a serial
number (6) and a Luhn check digit (1), written whole (`352099001761481`) or grouped as
`AA-BBBBBB-CCCCCC-D` (hyphens, spaces or slashes). `find_imeis` takes a run of exactly 15 digits
so written, not glued to other digits or letters, whose check digit is right and whose
reporting body is one that allocates codes (GSMA's list: 01 PTCRB, 35 BABT, 86 TAF, ...).

A 15-digit number is an IMEI by chance one time in a hundred or so (a check digit and a
reporting body), so a candidate alone scores 0.3, under every rule's least score: an order or
tracking number stays as written. Next to the word IMEI (or handset, serial), Presidio's context
enhancer raises it above the rule's 0.5 and it is redacted.
"""

from __future__ import annotations

import re

from screening.finders.cards import luhn_valid
from screening.redact import Span

ENTITY = "IMEI"
SCORE = 0.3  # a candidate alone; the context words raise it (screening.finder_table)

# The reporting bodies GSMA names as allocating Type Allocation Codes (the first two digits).
REPORTING_BODIES = frozenset({"01", "30", "33", "35", "44", "45", "49", "50", "51", "52", "53",
                              "54", "86", "91", "98", "99"})  # fmt: skip

# 15 digits, whole or as AA-BBBBBB-CCCCCC-D with one kind of separator, alone as a token.
_CANDIDATE = re.compile(
    r"(?<![\w-])(?:\d{15}|\d{2}([- /])\d{6}\1\d{6}\1\d)(?![\w-]|[.,]\d)", re.ASCII
)


def find_imeis(text: str) -> list[Span]:
    """IMEIs in a text (see the module's doc), each scored SCORE before its context."""
    found = []
    for match in _CANDIDATE.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if digits[:2] in REPORTING_BODIES and luhn_valid(digits):
            found.append(Span(match.start(), match.end(), ENTITY, SCORE))
    return found
