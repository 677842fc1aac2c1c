"""Faker's street addresses of 22 locales, with no address word near them: which `find_addresses` leaves.

    python benchmarks/faker_addresses.py [--per-locale 40] [--seed 5] [--show 3]

Faker (joke2k/faker, MIT; the generator behind much synthetic PII, Presidio's evaluator's among
it) writes each locale's street addresses in that locale's forms (`Miskolci utca 223.`, `Vial
Abel Adadia 33 Apt. 45`, `ул. Толстого, д. 1 к. 2`, `Φυλακής 730`), half of them on their own
and half with the town and postcode after. Each goes into one of five frames with no address
word (a sentence, a form's field, a line alone, a signature); the value is the street line with
its house number (those without a number are counted apart and skipped). Prints, per locale,
the values left whole (no finding touches them: what the screen's "left whole" counts) and
those not covered whole (a part left), and the first `--show` left whole. Generated, not written
by people: a sweep of written forms, not a held-out measure. Never run in CI.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from screening.finders.addresses import find_addresses

LOCALES = (
    "en_US", "en_GB", "en_CA", "en_AU", "de_DE", "fr_FR", "it_IT", "es_ES", "nl_NL", "pt_BR",
    "pt_PT", "pl_PL", "sv_SE", "da_DK", "fi_FI", "no_NO", "cs_CZ", "ru_RU", "el_GR", "tr_TR",
    "hu_HU", "ro_RO",
)  # fmt: skip
FRAMES = (
    "Please send it to {a} by Friday.",
    "Details: {a}",
    "{a}",
    "Kind regards,\nTom Baker\n{a}",
    "I moved to {a} last year.",
)


def framed(locale: str, count: int, seed: int) -> list[tuple[str, str]]:
    """(text, street line): `count` of the locale's Faker addresses, each in a frame drawn at
    random, with the street line as Faker wrote it (trailing punctuation left out)."""
    from faker import Faker

    fake, rng = Faker(locale), random.Random(f"{seed}-{locale}")
    fake.seed_instance(seed)
    cases = []
    for _ in range(count):
        street = fake.street_address()
        value = fake.address() if rng.random() < 0.5 else street
        text = rng.choice(FRAMES).format(a=value)
        line = street if street in text else value.split("\n")[0]
        cases.append((text, line.rstrip(" .,")))
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-locale", type=int, default=40)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--show", type=int, default=3, help="values left whole to print per locale")
    args = parser.parse_args()
    total = whole_left = part_left = no_number = 0
    rows = []
    for locale in LOCALES:
        left: list[str] = []
        part = counted = 0
        for text, line in framed(locale, args.per_locale, args.seed):
            if not any(c.isdigit() for c in line):
                no_number += 1
                continue
            counted += 1
            start = text.index(line)
            end = start + len(line)
            found = find_addresses(text)
            if not any(s.start < end and s.end > start for s in found):
                left.append(line)
            elif not any(s.start <= start and s.end >= end for s in found):
                part += 1
        total += counted
        whole_left += len(left)
        part_left += part
        rows.append((locale, counted, left, part))
    print(
        f"left whole: {whole_left} of {total} ({whole_left / total:.1%}); a part left: "
        f"{part_left}; street lines without a house number (skipped): {no_number}"
    )
    for locale, counted, left, part in rows:
        shown = ", ".join(repr(v) for v in left[: args.show])
        print(f"  {locale}: {len(left)} of {counted} left whole, {part} a part left  {shown}")


if __name__ == "__main__":
    main()
