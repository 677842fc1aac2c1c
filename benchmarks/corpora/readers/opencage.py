"""Reader of OpenCage's address-formatting test cases: the `opencage` corpus, and the cases the
dev set's `make_addresses_phones_cards.py` reads too."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks.corpora.readers.records import record, stable_hash

# --- OpenCageData/address-formatting: the expected addresses of its formatter's test cases ---

# Countries and territories whose cases are kept: Europe, its overseas parts, Australia and New
# Zealand, none of the 16 countries whose cases the dev set addresses_phones_cards_dev.jsonl holds.
OPENCAGE_COUNTRIES = [
    "ad",
    "al",
    "ba",
    "bg",
    "cy",
    "cz",
    "ee",
    "fi",
    "fo",
    "gi",
    "gr",
    "hr",
    "hu",
    "im",
    "is",
    "je",
    "gg",
    "li",
    "lt",
    "lu",
    "lv",
    "mc",
    "md",
    "me",
    "mk",
    "mt",
    "no",
    "ro",
    "rs",
    "si",
    "sk",
    "sm",
    "ua",
    "va",
    "xk",
    "gl",
    "ax",
    "bl",
    "re",
    "gf",
    "gp",
    "mq",
    "yt",
    "mf",
    "au",
    "nz",
]


@dataclass(frozen=True)
class FormattedCase:
    """A test case of OpenCage's address formatter that has a house number."""

    components: dict[str, Any]
    expected: str  # the expected address as the case writes it
    lines: list[str]  # the expected address, a line each (stripped, empty ones dropped)
    number: str  # the house number

    def house_lines(self) -> list[int]:
        """The lines that hold the house number as a word of its own."""
        word = re.compile(rf"(?<!\w){re.escape(self.number)}(?!\w)")
        return [i for i, line in enumerate(self.lines) if word.search(line)]


def formatted_cases(source: str) -> list[FormattedCase]:
    """The cases of one `testcases/countries/<cc>.yaml` (its text) with a house number
    (`house_number` or `housenumber`) and an expected address (`\\uXXXX` escapes read): what
    `opencage_cases` here and the dev set's `make_addresses_phones_cards.py` both read."""
    out = []
    for case in yaml.safe_load_all(source):
        parts = (case or {}).get("components") or {}
        number = str(parts.get("house_number", parts.get("housenumber", "")))
        expected = re.sub(
            r"\\u([0-9a-fA-F]{4})",
            lambda m: chr(int(m.group(1), 16)),
            (case and case["expected"]) or "",
        )
        if number and expected:
            lines = [line.strip() for line in expected.strip().splitlines() if line.strip()]
            out.append(FormattedCase(parts, expected, lines, number))
    return out


def opencage_cases(folder: Path) -> list[dict[str, Any]]:
    """Each test case of `testcases/countries/<cc>.yaml` (of `OPENCAGE_COUNTRIES`) with a house
    number and an address in Latin script: its `expected` address (OpenCage's formatting of
    OpenStreetMap's components, the name of the place first where it has one, the country
    last) as the text, on its lines or, for half of them by hash, joined by commas; the value
    the line that holds the house number (with the road where the case has one), without a
    final full stop."""
    out: list[dict[str, Any]] = []
    for country in OPENCAGE_COUNTRIES:
        path = folder / f"{country}.yaml"
        if not path.exists():
            continue
        for case in formatted_cases(path.read_text()):
            lines = case.lines
            if re.search(r"[\u0370-\u1fff]", case.expected):
                continue
            road = str(case.components.get("road", ""))
            street = [lines[i] for i in case.house_lines() if road in lines[i]]
            if not street:
                continue
            joined = ", " if stable_hash("opencage", case.expected) % 2 else "\n"
            text = joined.join(lines)
            value = street[0].rstrip(".,")
            start = text.index(value)
            span = {
                "type": "STREET_ADDRESS",
                "value": value,
                "start": start,
                "end": start + len(value),
            }
            out.append(record("opencage", len(out), text, [span]))
    return out
