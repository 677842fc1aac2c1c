"""Credential detection: catch rate per surface form, false drops, and what it costs the screen.

    python benchmarks/credentials.py --planted 5000 --clean 5000

Generates a corpus (`samples.credential_corpus`: tickets with credentials planted in each surface
form, and clean tickets full of identifiers), runs `screening.credentials.find_credentials` over
it and prints
- the catch rate per form and overall: a planted credential counts as caught only when every
  character of every occurrence lies inside a secret finding scored >= 0.5;
- the false-drop rate: clean tickets with any secret finding scored >= 0.5 (the default rules drop
  such records);
- throughput of the screen's analyzer (`screening.detectors.build_analyzer`: spaCy + Presidio +
  the credential recognizer) against the same analyzer without the credential recognizer, in the
  same process, over `--speed-texts` tickets, as `ratio N.NNx` (time with / time without).
Never run in CI: these machines are shared and a wall time is no test.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from samples.credential_corpus import corpus, measure
from screening.credentials import find_credentials
from screening.detectors import Detectors, build_analyzer
from screening.policy import ScreenConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--planted", type=int, default=5000, help="tickets with credentials")
    parser.add_argument("--clean", type=int, default=5000, help="tickets without")
    parser.add_argument("--seed", type=int, default=99)
    parser.add_argument("--speed-texts", type=int, default=2000, help="tickets timed")
    parser.add_argument("--show", type=int, default=0, help="print this many misses and drops")
    args = parser.parse_args()

    planted, clean = corpus(args.planted, args.clean, args.seed)
    start = time.perf_counter()
    rates = measure(
        planted, clean, lambda t: [(f.start, f.end, f.score) for f in find_credentials(t)]
    )
    seconds = time.perf_counter() - start
    print(f"{len(planted)} planted tickets, {len(clean)} clean ({seconds:.1f}s)")
    for form, (caught, n) in sorted(rates.per_form.items()):
        print(f"  {form:26s} {caught:5d}/{n:<5d} {caught / n:7.2%}")
    caught = sum(c for c, _ in rates.per_form.values())
    total = sum(n for _, n in rates.per_form.values())
    print(f"catch {caught}/{total} = {rates.catch:.2%}")
    dropped, n_clean = rates.false_drops
    print(f"false drops {dropped}/{n_clean} = {rates.false_drop_rate:.2%}")
    for form, text in rates.missed[: args.show]:
        print(f"MISSED [{form}] {text!r}")
    for text in rates.false[: args.show]:
        print(f"DROPPED {text!r}")

    config = ScreenConfig()
    entities = list(config.all_entities())
    texts = [
        t.text
        for t in (planted + clean)[:: max(1, (len(planted) + len(clean)) // args.speed_texts)]
    ]
    texts = texts[: args.speed_texts]
    with_cred = Detectors(build_analyzer(config.spacy_model), "en", entities)
    without = Detectors(build_analyzer(config.spacy_model), "en", entities)
    without.analyzer.registry.remove_recognizer("CredentialRecognizer")
    for d in (with_cred, without):
        d.analyze(["warm up"])
    timings = {}
    for name, d in (("without", without), ("with", with_cred), ("without", without)):
        start = time.perf_counter()
        d.analyze(texts)
        timings[name] = min(timings.get(name, float("inf")), time.perf_counter() - start)
    for name in ("without", "with"):
        print(f"analyzer {name} credential recognizer: {len(texts) / timings[name]:,.0f} texts/s")
    print(f"ratio {timings['with'] / timings['without']:.2f}x (time with / time without)")


if __name__ == "__main__":
    main()
