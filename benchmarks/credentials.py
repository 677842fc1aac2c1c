"""Credential detection: catch rate per surface form, false drops, and what it costs the screen.

    python benchmarks/credentials.py --planted 5000 --clean 5000 --code-windows 3000

Generates a corpus (`benchmarks.corpora.credentials`: tickets with credentials planted in each
surface form, and clean tickets full of identifiers), runs
`screening.finders.credentials.find_credentials` over it and prints
- the catch rate per form and overall: a planted credential counts as caught only when every
  character of every occurrence lies inside a secret finding scored >= 0.5;
- the false-drop rate: clean tickets with any secret finding scored >= 0.5 (the default rules drop
  such records);
- recall on credentials written by others (`--external`, default
  `benchmarks/corpora/credentials_dev.jsonl`: Nosey Parker's rule examples, see
  `benchmarks/corpora/SOURCES.md`), overall and the vendors with misses;
- the false-positive rate on code nobody here wrote: `--code-windows` windows of 10 lines of the
  Python source of installed packages (click, jinja2, yaml, rich, requests, urllib3, fsspec,
  typer, pydantic; their tests left out), a window counting when it has any finding >= 0.5;
- the same on the records of the external corpora (`benchmarks/corpora/`) that hold no
  labelled credential: their clean records, and all records, Nosey Parker's left out;
- throughput of the screen's analyzer (`screening.detectors.build_analyzer`: spaCy + Presidio +
  the credential recognizer) against the same analyzer without the credential recognizer, in the
  same process, over `--speed-texts` tickets, as `ratio N.NNx` (time with / time without).
Never run in CI: these machines are shared and a wall time is no test.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.corpora.credentials.corpus import Ticket, corpus
from benchmarks.corpora.credentials.rates import covered, measure
from screening.config import ScreenConfig
from screening.detectors import Detectors, build_analyzer
from screening.finders.credentials import find_credentials

EXTERNAL = Path(__file__).resolve().parent / "corpora" / "credentials_dev.jsonl"
CODE_PACKAGES = (
    "click",
    "jinja2",
    "yaml",
    "rich",
    "requests",
    "urllib3",
    "fsspec",
    "typer",
    "pydantic",
)


def external_tickets(path: Path = EXTERNAL) -> list[Ticket]:
    """The dev corpus as planted tickets, one form per vendor (`np.slack.2` -> `np.slack`)."""
    tickets = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        form = record["rule"].rsplit(".", 1)[0]
        tickets.append(Ticket(record["text"], form, tuple(record["secrets"])))
    return tickets


def code_windows(n: int, lines: int = 10) -> list[Ticket]:
    """`n` windows of `lines` lines of installed packages' own Python source (no tests)."""
    windows: list[Ticket] = []
    for name in CODE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(next(iter(spec.submodule_search_locations)))
        for path in sorted(root.rglob("*.py")):
            if "test" in path.name or "tests" in path.parts:
                continue
            text = path.read_text(encoding="utf-8", errors="replace").splitlines()
            for i in range(0, len(text), lines):
                windows.append(Ticket("\n".join(text[i : i + lines]), None, ()))
    step = max(1, len(windows) // n) if n else 1
    return windows[::step][:n]


def external_without_credentials() -> dict[str, list[str]]:
    """Texts of the external corpora with no credential labelled: the sources' clean records,
    and every record of the corpora other than Nosey Parker's."""
    from benchmarks.corpora.measure import CORPORA, load

    records = [r for name in CORPORA if name != "noseyparker" for r in load(name)]
    return {
        "external clean records": [r["text"] for r in records if r["clean"]],
        "external records without a credential": [r["text"] for r in records],
    }


def external_recall(tickets: list[Ticket], min_score: float = 0.5) -> tuple[int, int, Counter]:
    """(caught, total, misses per vendor) over planted tickets written by others."""
    caught, total, misses = 0, 0, Counter()
    for tk in tickets:
        spans = [(f.start, f.end, f.score) for f in find_credentials(tk.text)]
        for value in tk.secrets:
            total += 1
            if covered(tk.text, value, spans, min_score):
                caught += 1
            else:
                misses[tk.form] += 1
    return caught, total, misses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--planted", type=int, default=5000, help="tickets with credentials")
    parser.add_argument("--clean", type=int, default=5000, help="tickets without")
    parser.add_argument("--seed", type=int, default=99)
    parser.add_argument("--speed-texts", type=int, default=2000, help="tickets timed")
    parser.add_argument("--show", type=int, default=0, help="print this many misses and drops")
    parser.add_argument("--external", type=Path, default=EXTERNAL, help="a credentials_dev.jsonl")
    parser.add_argument(
        "--code-windows", type=int, default=3000, help="code windows for false positives"
    )
    args = parser.parse_args()

    caught, total, misses = external_recall(external_tickets(args.external))
    print(f"external ({args.external.name}): recall {caught}/{total} = {caught / total:.2%}")
    print("  misses per vendor: " + ", ".join(f"{k} {v}" for k, v in misses.most_common()))
    windows = code_windows(args.code_windows)
    flagged = [w.text for w in windows if any(f.score >= 0.5 for f in find_credentials(w.text))]
    print(
        f"code windows with a finding: {len(flagged)}/{len(windows)} = "
        f"{len(flagged) / max(1, len(windows)):.2%} ({', '.join(CODE_PACKAGES)})"
    )
    for text in flagged[: args.show]:
        print(f"CODE FLAGGED {text!r}")
    for name, texts in external_without_credentials().items():
        hits = [t for t in texts if any(f.score >= 0.5 for f in find_credentials(t))]
        print(f"{name} with a finding: {len(hits)}/{len(texts)} = {len(hits) / len(texts):.2%}")
        for text in hits[: args.show]:
            print(f"EXTERNAL FLAGGED {text!r}")

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
