"""Rebuild the external evaluation corpora (benchmarks/corpora/*.jsonl) from their sources.

    python benchmarks/corpora/build.py \\
        [--presidio-tests DIR] [--noseyparker-rules DIR] [--usaddress-xml FILE] [--wnut FILE] \\
        [--uner-ewt DIR] [--uner-pud DIR] \\
        [--validatorjs-tests FILE] [--libpostal-tests FILE] [--usaddress-us50 FILE] \\
        [--pyap-tests DIR] [--opencage-tests DIR] [--pelias-tests DIR] \\
        [--usaddress-training DIR] [--aftership-tests FILE] [--out DIR]

Each corpus whose input is given is rebuilt (libphonenumber's always: it reads the installed
package); SOURCES.md has the full command.

Every corpus is labelled personal data or credentials written by others (SOURCES.md says where
from, at which commit, under which licence). Each line of a corpus is one record a user could
ingest, in one common format (`readers.records.record`):

    {"id", "source", "split", "text", "spans": [{"type", "value", "start", "end", "label"?}],
     "clean", "question"?, "answers"?}

`spans` are the source's labels turned into character offsets of `text`, typed as one of
`measure.TYPES`; `clean` is true when the source says the record holds none of them (a negative
example); `split` is `dev` or `test` by a hash of the id (`measure.split_of`): tune on dev only.
A deterministic third of the labelled records is also shaped as an extractive-QA record
(`question` asks for the first labelled value, `answers` is that value at its offset), so the
benchmark can check that every kept answer still sits at its `answer_start`.

The inputs are the files of the fetched sources (the sources' own repositories at the commits
SOURCES.md names); phone numbers come from the `phonenumbers` package (libphonenumber's
metadata) installed with Presidio. Nothing here is downloaded. Each kind of source has its
reader in `benchmarks/corpora/readers/`; this script only runs them and writes the files.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.corpora.readers.address_tests import libpostal_cases, pelias_cases, pyap_cases
from benchmarks.corpora.readers.opencage import opencage_cases
from benchmarks.corpora.readers.uner import uner_records
from benchmarks.corpora.readers.usaddress import usaddress_lines, usaddress_training, usaddress_us50
from benchmarks.corpora.readers.values import (
    aftership_phones,
    noseyparker_examples,
    phone_examples,
    presidio_cases,
    validatorjs_unlabelled_phones,
    validatorjs_values,
)
from benchmarks.corpora.readers.wnut import wnut_sentences

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--presidio-tests", type=Path)
    parser.add_argument("--noseyparker-rules", type=Path)
    parser.add_argument("--usaddress-xml", type=Path, help="training/labeled.xml")
    parser.add_argument("--wnut", type=Path)
    parser.add_argument("--uner-ewt", type=Path, help="a UNER_English-EWT checkout")
    parser.add_argument("--uner-pud", type=Path, help="a UNER_English-PUD checkout")
    parser.add_argument("--validatorjs-tests", type=Path)
    parser.add_argument("--libpostal-tests", type=Path, help="test/test_parser.c")
    parser.add_argument(
        "--usaddress-us50", type=Path, help="measure_performance/test_data/us50_test_tagged.xml"
    )
    parser.add_argument("--pyap-tests", type=Path, help="a pyap checkout (its test_parser_*.py)")
    parser.add_argument("--pelias-tests", type=Path, help="pelias/parser's test folder")
    parser.add_argument(
        "--opencage-tests", type=Path, help="address-formatting's testcases/countries"
    )
    parser.add_argument(
        "--usaddress-training",
        type=Path,
        help="usaddress's training/ folder (a dev-only corpus; needs the address corpora in --out)",
    )
    parser.add_argument("--aftership-tests", type=Path, help="AfterShip/phone's __tests__/data.csv")
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument("--n", type=int, default=300, help="records per sampled source")
    args = parser.parse_args()
    builders = {  # corpus: (its input, how it is built); only corpora whose input is given
        "presidio-tests": (args.presidio_tests, presidio_cases),
        "noseyparker": (args.noseyparker_rules, noseyparker_examples),
        "usaddress": (args.usaddress_xml, lambda p: usaddress_lines(p, args.n)),
        "wnut17": (args.wnut, lambda p: wnut_sentences(p, args.n, args.n // 2)),
        "uner-en": (
            args.uner_ewt or args.uner_pud,
            lambda _: uner_records(args.uner_ewt, args.uner_pud, args.n, args.n // 2),
        ),
        "libphonenumber": (True, lambda _: phone_examples(args.n)),
        "validatorjs": (args.validatorjs_tests, lambda p: validatorjs_values(p, args.n // 2)),
        "phones-unlabelled": (
            args.validatorjs_tests,
            lambda p: validatorjs_unlabelled_phones(p, args.n // 2),
        ),
        "phones-aftership": (args.aftership_tests, aftership_phones),
        "libpostal": (args.libpostal_tests, libpostal_cases),
        "usaddress-us50": (
            args.usaddress_us50 and args.usaddress_xml,
            lambda _: usaddress_us50(args.usaddress_us50, args.usaddress_xml, args.n),
        ),
        "pyap": (args.pyap_tests, pyap_cases),
        "opencage": (args.opencage_tests, opencage_cases),
        "pelias": (args.pelias_tests, pelias_cases),
        "usaddress-training": (
            args.usaddress_training,
            lambda p: usaddress_training(p, args.n, args.out),
        ),
    }
    for name, (source, build) in builders.items():
        if not source:
            continue
        records = build(source)
        path = args.out / f"{name}.jsonl"
        with path.open("w") as f:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        spans = sum(len(r["spans"]) for r in records)
        clean = sum(r["clean"] for r in records)
        print(f"{path}: {len(records)} records, {spans} values, {clean} clean")


if __name__ == "__main__":
    main()
