"""Faker's phone numbers, with no phone word near them: which `find_phones` leaves.

    python benchmarks/faker_phones.py [--per-locale 40] [--seed 11] [--show 4]

Faker (joke2k/faker, MIT; the generator behind much synthetic PII, Presidio's evaluator's
among it) writes each locale's phone numbers in that locale's forms, with random digits:
many are numbers libphonenumber calls invalid (an area code no plan has), some carry an
extension (`387.978.9328x792`). Each number goes into one of six frames that hold no phone
word (a note, a form's field, a sentence, a line alone, a signature); a number counts as left
unless one finding covers it whole, at any score. Prints those left per locale and the first
`--show` of each. Generated, not written by people: a sweep of written forms, not a held-out
measure. Never run in CI.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from screening.finders.phones import find_phones

LOCALES = (
    "en_US", "en_GB", "en_CA", "en_AU", "en_IN", "en_NZ", "de_DE", "fr_FR", "it_IT", "es_ES",
    "nl_NL", "pt_BR", "pt_PT", "pl_PL", "sv_SE", "da_DK", "fi_FI", "no_NO", "cs_CZ", "ru_RU",
    "uk_UA", "el_GR", "tr_TR", "hu_HU", "ro_RO", "he_IL", "ja_JP", "zh_CN", "ko_KR", "ar_AA",
)  # fmt: skip
FRAMES = (
    "Please note {n} for later.",
    "Details: {n}",
    "Sarah wrote {n} on the form.",
    "{n}",
    "If anything comes up, {n} is best.",
    "Kind regards,\nTom Baker\n{n}",
)


def framed(locale: str, count: int, seed: int) -> list[tuple[str, str]]:
    """(text, number): `count` of the locale's Faker numbers, each in a frame drawn at random."""
    from faker import Faker

    fake, rng = Faker(locale), random.Random(f"{seed}-{locale}")
    fake.seed_instance(seed)
    return [(rng.choice(FRAMES).format(n=(n := fake.phone_number())), n) for _ in range(count)]


def found_whole(text: str, number: str) -> bool:
    start = text.index(number)
    end = start + len(number)
    return any(s.start <= start and s.end >= end for s in find_phones(text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-locale", type=int, default=40)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--show", type=int, default=4, help="values left to print per locale")
    args = parser.parse_args()
    left: dict[str, list[str]] = defaultdict(list)
    total = Counter()
    for locale in LOCALES:
        for text, number in framed(locale, args.per_locale, args.seed):
            total[locale] += 1
            if not found_whole(text, number):
                left[locale].append(number)
    all_left = sum(len(v) for v in left.values())
    print(f"left whole: {all_left} of {sum(total.values())} ({all_left / sum(total.values()):.1%})")
    for locale in LOCALES:
        if left[locale]:
            shown = ", ".join(left[locale][: args.show])
            print(f"  {locale}: {len(left[locale])} of {total[locale]}  {shown}")


if __name__ == "__main__":
    main()
