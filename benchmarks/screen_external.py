"""The default screen on personal data and credentials written by others, per corpus and type.

    python benchmarks/screen_external.py [--split test|dev|all] [--generated 2000] [--json PATH]
        [--set person_model_dir=DIR ...]

Runs the default config's screen (ingest's validation + `screening.scan.screen_records`, the
policy of `tunegate ingest` + `tunegate screen`; see benchmarks/corpora/measure.py) over each
external corpus of benchmarks/corpora/ (SOURCES.md: where each comes from) and over this
project's generated corpora for contrast, and prints per corpus and type: the labelled values,
those left whole in kept records, recall (1 - left / values), values with a part left; per
corpus: records kept, clean records (the source's negatives) dropped and kept with a part
redacted, kept QA records whose answers moved off their `answer_start`. `--split dev` is the
half to tune on; the default `test` half is the one to report. Issue 23's targets are checked on
the totals (`target` column).
Never run in CI (tests/screening/test_screen_external.py guards a slice).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.corpora.measure import (
    CORPORA,
    MAX_LEFT,
    MIN_KEPT,
    Measured,
    generated,
    load,
    run,
    types_seen,
)
from flows.config import ConfigError, load_config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=["test", "dev", "all"], default="test")
    parser.add_argument(
        "--generated", type=int, default=1000, help="tickets per generated corpus (0: none)"
    )
    parser.add_argument("--show", type=int, default=0, help="print this many leaks per type")
    parser.add_argument("--json", type=Path, help="write the numbers here")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a screen config field, as tunegate's --set screen.FIELD=VALUE: "
        "person_model_dir=DIR reads names with your own token classifier",
    )
    args = parser.parse_args()
    try:
        config = load_config(None, [f"screen.{item}" for item in args.set]).screen
    except ConfigError as exc:
        parser.error(str(exc))

    results: dict[str, Measured] = {}
    start = time.perf_counter()
    for name in CORPORA:
        records = load(name, args.split)
        if records:  # a dev-only corpus has no test half
            results[name] = run(records, config)
    external = Measured()
    for m in results.values():
        external.add(m)
    results["external, all"] = external
    if args.generated:
        for name, records in generated(args.generated, args.generated).items():
            results[name] = run([r for r in records if args.split in ("all", r["split"])], config)
    seconds = time.perf_counter() - start

    print(f"split {args.split}; {seconds:.0f}s")
    print(
        f"{'corpus':<22}{'type':<16}{'values':>7}{'left':>6}{'recall':>9}{'part':>6}{'target':>8}"
    )
    for name, m in results.items():
        for t in types_seen([m]):
            c = m.types[t]
            target = ""
            if name == "external, all":
                target = "met" if c.left_rate <= MAX_LEFT[t] else f"<={MAX_LEFT[t]:.0%}"
            print(
                f"{name:<22}{t:<16}{c.values:>7}{c.left_whole:>6}{c.recall:>9.2%}"
                f"{c.part_left:>6}{target:>8}"
            )
    print(
        f"\n{'corpus':<22}{'records':>8}{'kept':>9}{'clean':>7}{'dropped':>8}{'redacted':>9}"
        f"{'QA kept':>8}{'moved':>6}"
    )
    for name, m in results.items():
        kept = f"{m.kept_rate:.1%}"
        if name == "external, all":
            kept += "*" if m.kept_rate < MIN_KEPT else ""
        print(
            f"{name:<22}{m.records:>8}{kept:>9}{m.clean:>7}{m.clean_dropped:>8}"
            f"{m.clean_redacted:>9}{m.qa_kept:>8}{m.qa_misplaced:>6}"
        )
    if external.kept_rate < MIN_KEPT:
        print(f"(* below the {MIN_KEPT:.0%} of records kept that issue 23 asks for)")
    if args.show:
        for t in types_seen([external]):
            for value in external.types[t].left_examples[: args.show]:
                print(f"LEFT [{t}] {value!r}")
        for text in external.dropped_clean_examples[: args.show]:
            print(f"DROPPED clean {text!r}")
        for text in external.redacted_clean_examples[: args.show]:
            print(f"REDACTED clean {text!r}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {"split": args.split, "corpora": {n: m.as_json() for n, m in results.items()}},
                indent=2,
                ensure_ascii=False,
            )
        )


if __name__ == "__main__":
    main()
