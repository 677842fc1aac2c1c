"""Phone numbers of every region in the forms people write them: which `find_phones` leaves.

    python benchmarks/phone_forms.py [--per-type 8] [--seed 7] [--show 20]

For every region libphonenumber knows, its mobile and fixed-line example numbers with the last
four digits (fewer for short numbers) drawn at random, kept when libphonenumber calls the result
valid for that region, up to `--per-type` each; each number written six ways: E.164
(`+4917612345678`), international (`+49 176 12345678`), national (`0176 12345678`), national
digits only, the country code without `+` (`4917612345678`) and with `00`. Each value after
`Mobile: ` (validator.js's corpus frame, benchmarks/corpora/) goes through
`screening.finders.phones.find_phones`; a value counts as left unless one finding covers it whole, at any
score (the policy's 0.4 cut is below every score after a phone word). Prints the values, those
left per form, and the first `--show` of them. Generated from libphonenumber's metadata: no
corpus is read, so it is no held-out measure, only a sweep of written forms.
Never run in CI.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter
from pathlib import Path

import phonenumbers
from phonenumbers import PhoneNumberFormat, PhoneNumberType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from screening.finders.phones import find_phones

FRAME = "Mobile: "


def numbers(per_type: int, seed: int) -> dict[str, tuple[str, str]]:
    """value -> (form, region), every region's valid numbers in six forms."""
    rng = random.Random(seed)
    values: dict[str, tuple[str, str]] = {}
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        for kind in (PhoneNumberType.MOBILE, PhoneNumberType.FIXED_LINE):
            example = phonenumbers.example_number_for_type(region, kind)
            if example is None:
                continue
            nsn = phonenumbers.national_significant_number(example)
            tail = min(4, len(nsn) - 2)
            got = 0
            for _ in range(5 * per_type):
                drawn = nsn[:-tail] + "".join(rng.choice("0123456789") for _ in range(tail))
                number = phonenumbers.parse(f"+{example.country_code}{drawn}")
                if not phonenumbers.is_valid_number(number):
                    continue
                if phonenumbers.region_code_for_number(number) != region:
                    continue
                e164 = phonenumbers.format_number(number, PhoneNumberFormat.E164)
                national = phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL)
                forms = {
                    "E.164": e164,
                    "international": phonenumbers.format_number(
                        number, PhoneNumberFormat.INTERNATIONAL
                    ),
                    "national": national,
                    "national digits": re.sub(r"\D", "", national),
                    "country code, no +": e164[1:],
                    "00": "00" + e164[1:],
                }
                for form, value in forms.items():
                    values.setdefault(value, (form, region))
                got += 1
                if got == per_type:
                    break
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-type", type=int, default=8, help="numbers per region and type")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show", type=int, default=20, help="print this many values left")
    args = parser.parse_args()

    values = numbers(args.per_type, args.seed)
    left = []
    for value, (form, region) in values.items():
        text = FRAME + value
        if not any(s.start <= len(FRAME) and s.end >= len(text) for s in find_phones(text)):
            left.append((form, region, value))
    print(f"{len(values)} values, {len(left)} left")
    for form, n in Counter(form for form, _, _ in left).most_common():
        print(f"  {form}: {n}")
    for form, region, value in left[: args.show]:
        print(f"LEFT {region} ({form}) {value!r}")


if __name__ == "__main__":
    main()
