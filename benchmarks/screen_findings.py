"""The screen's findings on every text of every corpus, one JSON line per text, and a comparison.

    python benchmarks/screen_findings.py --out findings.jsonl [--corpora DIR] [--corpus NAME ...]
        [--generated 500] [--limit N]
    python benchmarks/screen_findings.py --compare before.jsonl after.jsonl

Each text of each corpus under `--corpora` (every `*.jsonl` and `*.json` file: its `text`,
`question`, `document`, `summary`, `context` and message `content` strings, answers included)
and of the generated sample corpora (`samples.generate` for every task,
`benchmarks.corpora.names`, `benchmarks.corpora.credentials`) goes through what the
screen stage does to a text with the default config: `Detectors.analyze` (Presidio, the screen's
recognizers, the person reader), the toxicity of `screening.scan` and `apply_policy` on the text
as a one-field record. A line holds
the corpus, the text's index in it, its findings as sorted `(entity, start, end, score)` (score
rounded to 4 places), the record the policy keeps (redacted) or its masked copy and quarantine
reason, the flags, and the toxicity score, reason and decision.

`--compare A B` prints every text whose line differs and exits 1 when any does: a refactoring
of `screening/` must leave it at zero differences. Never run in CI: on two idle cores about 20
minutes of CPU for all corpora (most of it Topical-Chat's and code chat's long texts); `--corpus`
runs some, `--limit` the first texts of each.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flows.config import load_config
from screening.config import ScreenConfig
from screening.detectors import AnalysisFailed, detectors_for
from screening.policy import apply_policy
from screening.scan import _toxicity

ROOT = Path(__file__).resolve().parents[1]
TEXT_KEYS = frozenset({"text", "question", "document", "summary", "context", "content"})
GENERATED = "generated"


def texts_of(value: Any) -> Iterator[str]:
    """Every text string of a corpus record, in document order (labels and ids left out)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in TEXT_KEYS and isinstance(item, str):
                yield item
            elif key in TEXT_KEYS and isinstance(item, list):
                yield from (t for t in item if isinstance(t, str))
            elif isinstance(item, dict | list):
                yield from texts_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from texts_of(item)


def corpus_texts(path: Path) -> list[str]:
    """The texts of one corpus file (JSON Lines, or one JSON document such as SQuAD's)."""
    if path.suffix == ".json":
        return list(texts_of(json.loads(path.read_text())))
    lines = path.read_text().splitlines()
    return [t for line in lines if line.strip() for t in texts_of(json.loads(line))]


def generated_texts(n: int) -> list[str]:
    """The generated sample corpora: every task's sample (its valid lines), names, credentials."""
    from benchmarks.corpora.credentials.corpus import corpus as credential_corpus
    from benchmarks.corpora.names.corpus import generate as generate_names
    from samples.generate import TASKS, generate_sample

    texts: list[str] = []
    for task in TASKS:
        for line in generate_sample(task, n, seed=11).lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a malformed line on purpose: ingest rejects it before the screen
            texts += texts_of(record)
    texts += [t.text for t in generate_names(n, seed=101)]
    planted, clean = credential_corpus(n, n, 101)
    texts += [t.text for t in planted + clean]
    return texts


def corpora(folder: Path, generated: int) -> dict[str, Path | None]:
    """Corpus name -> file (None: the generated corpora), sorted by name."""
    found: dict[str, Path | None] = {
        p.name: p for p in sorted([*folder.glob("*.jsonl"), *folder.glob("*.json")])
    }
    if generated:
        found[GENERATED] = None
    return found


def screen_lines(corpus: str, texts: list[str], config: ScreenConfig) -> Iterator[dict[str, Any]]:
    """One line per text: what the screen stage finds in it and does to it."""
    detectors = detectors_for(
        config.spacy_model, config.language, config.all_entities(), config.person_reader()
    )
    spans = detectors.analyze(texts, config.batch_size)
    toxicity = _toxicity(texts, config.toxicity)
    for index, (text, found, tox) in enumerate(zip(texts, spans, toxicity, strict=True)):
        line: dict[str, Any] = {"corpus": corpus, "index": index}
        if isinstance(found, AnalysisFailed):
            line["failed"] = found.reason
        line["findings"] = sorted((s.entity, s.start, s.end, round(s.score, 4)) for s in found)
        outcome = apply_policy(
            "text-generation", {"id": str(index), "text": text}, {"text": found}, tox.score,
            config, None, tox.why,
        )  # fmt: skip
        decision = config.toxicity.decide(tox.score)
        line |= {
            "record": outcome.record,
            "reason": outcome.reason,
            "flagged": outcome.flagged,
            "flag_reasons": outcome.flag_reasons,
            "toxicity": [round(tox.score, 4), tox.why, decision.value if decision else None],
        }
        yield line


def compare(before: Path, after: Path) -> int:
    """Print the texts whose lines differ between two runs; the number of them."""

    def read(path: Path) -> dict[tuple[str, int], str]:
        out = {}
        for raw in path.read_text().splitlines():
            line = json.loads(raw)
            out[(line["corpus"], line["index"])] = raw
        return out

    a, b = read(before), read(after)
    differing = 0
    for key in sorted(a.keys() | b.keys()):
        if a.get(key) != b.get(key):
            differing += 1
            print(f"{key[0]} #{key[1]}\n  A {a.get(key)}\n  B {b.get(key)}")
    corpora_a = sorted({c for c, _ in a})
    print(f"{len(a)} texts in A, {len(b)} in B, {len(corpora_a)} corpora; {differing} differ")
    return differing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="write the JSON lines here")
    parser.add_argument(
        "--corpora", type=Path, default=ROOT / "benchmarks/corpora", help="a folder of corpora"
    )
    parser.add_argument(
        "--corpus", action="append", default=[], help="only this corpus (file name, or generated)"
    )
    parser.add_argument(
        "--generated", type=int, default=500, help="lines per generated corpus (0: none)"
    )
    parser.add_argument(
        "--limit", type=int, default=0, help="only the first N texts of each corpus (0: all)"
    )
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    parser.add_argument("--list", action="store_true", help="print the corpora and stop")
    args = parser.parse_args()
    if args.compare:
        raise SystemExit(1 if compare(*args.compare) else 0)

    found = corpora(args.corpora, args.generated)
    unknown = sorted(set(args.corpus) - set(found))
    if unknown:
        parser.error(f"unknown corpus {unknown}; known: {sorted(found)}")
    names = args.corpus or list(found)
    if args.list:
        print("\n".join(names))
        return
    if args.out is None:
        parser.error("--out is needed (or --compare A B, or --list)")
    config = load_config(None, []).screen
    with args.out.open("w") as out:
        for name in names:
            start = time.perf_counter()
            path = found[name]
            texts = generated_texts(args.generated) if path is None else corpus_texts(path)
            texts = texts[: args.limit] if args.limit else texts
            for line in screen_lines(name, texts, config):
                out.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
            out.flush()
            print(f"{name}: {len(texts)} texts, {time.perf_counter() - start:.0f}s", flush=True)


if __name__ == "__main__":
    main()
