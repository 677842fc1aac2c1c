"""Toxicity screen on text written by others: everyday dialogue and chat with code that must be
kept, clearly abusive text that must be dropped.

    python benchmarks/toxicity.py                 # the test halves, default config
    python benchmarks/toxicity.py --split dev --set flag_threshold=0.9
    python benchmarks/toxicity.py --corpus everyday_taskmaster_coffee

Reads the corpora of benchmarks/corpora/ (sources and licences in SOURCES.md there), scores
every message of every record with the configured toxicity backend, as the screen does
(`screening.scan._sentence_toxicity`: prose only, abusive terms 1.0), and decides each record
as the screen does (`screening.scan.record_toxicity`, then `ToxicityConfig.decide`: its worst
sentence; a long record's few toxic sentences replaced instead). Prints, per corpus, the share
of records dropped, flagged, and kept with sentences replaced (flagged too); everyday and code
corpora must stay at <= 0.5% dropped, toxic ones at >= 95%.
Personal data and credentials are not screened here (benchmarks/screen.py times the whole
screen).
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

from screening.config import Action, ToxicityConfig
from screening.scan import _sentence_toxicity, record_toxicity

EXTERNAL = Path(__file__).resolve().parent / "corpora"
CORPORA = {  # name: must it be dropped
    "everyday_topical_chat": False,
    "everyday_convabuse_clean": False,
    "everyday_hatecheck": False,
    "everyday_taskmaster_coffee": False,  # added after tuning: never read while tuning
    # corpora of other benchmarks, never read to tune the toxicity screen: task-oriented chat
    # (Schema-Guided Dialogue) and friends' banter at a game table (CRD3: fights, jokes, swearing)
    "chat_sgd": False,
    "summarization_crd3": False,
    "code_chat": False,
    "toxic_convabuse_strong": True,
    "toxic_davidson_hate": True,
    "toxic_hatecheck_explicit": True,
    "toxic_hatecheck_disguised": True,
}


def load(name: str, split: str) -> list[dict]:
    """A corpus' records of `split` as chat records; a summarization corpus' dialogue (CRD3's
    `Speaker: utterance` lines) as one message per line."""
    with (EXTERNAL / f"{name}.jsonl").open(encoding="utf-8") as f:
        records = [r for r in map(json.loads, f) if split == "all" or r["split"] == split]
    for r in records:
        if "document" in r:
            r["messages"] = [
                {"role": "user", "content": line} for line in r["document"].splitlines() if line
            ]
    return records


def decisions(records: list[dict], config: ToxicityConfig) -> list[tuple[Action | None, int]]:
    """What the toxicity screen does with each record (drop, flag or nothing) and how many of
    its sentences it replaces (`screening.scan.record_toxicity`: a long record's few toxic
    sentences replaced rather than the record dropped; such a record is flagged)."""
    texts = [m["content"] for r in records for m in r["messages"]]
    scored = iter(_sentence_toxicity(texts, config))
    out: list[tuple[Action | None, int]] = []
    for r in records:
        fields = {f"messages[{i}]": next(scored) for i in range(len(r["messages"]))}
        toxicity, removed = record_toxicity(fields, config)
        replaced = sum(map(len, removed.values()))
        action = config.decide(toxicity.score)
        out.append((action or (Action.flag if replaced else None), replaced))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="test", choices=["dev", "test", "all"])
    parser.add_argument(
        "--set", action="append", default=[], help="a ToxicityConfig field: threshold=0.99"
    )
    parser.add_argument(
        "--corpus", action="append", choices=list(CORPORA), help="only these corpora (repeat)"
    )
    args = parser.parse_args()
    fields = dict(item.split("=", 1) for item in args.set)
    config = ToxicityConfig(**{k: (None if v == "null" else v) for k, v in fields.items()})
    print(
        f"threshold {config.threshold} ({config.action.value}), flag_threshold "
        f"{config.flag_threshold}, terms {config.terms}, classifier {config.classifier}; "
        f"{args.split} halves"
    )
    print(
        f"{'corpus':28s} {'records':>7s} {'dropped':>8s} {'flagged':>8s} {'replaced':>8s}  target"
    )
    met = True
    for name, toxic in CORPORA.items():
        if args.corpus and name not in args.corpus:
            continue
        records = load(name, args.split)
        if not records:  # a corpus kept whole for testing has no dev half
            print(f"{name:28s} {0:7d}  no {args.split} half")
            continue
        start = time.perf_counter()
        decided = decisions(records, config)
        seconds = time.perf_counter() - start
        acts = [action for action, _ in decided]
        dropped = sum(a is Action.drop for a in acts) / len(acts) * 100
        flagged = sum(a is Action.flag for a in acts) / len(acts) * 100
        replaced = sum(n > 0 for _, n in decided) / len(acts) * 100
        ok = dropped >= 95.0 if toxic else dropped <= 0.5
        met &= ok
        target = ">= 95% dropped" if toxic else "<= 0.5% dropped"
        print(
            f"{name:28s} {len(acts):7d} {dropped:7.1f}% {flagged:7.1f}% {replaced:7.1f}%  {target}: "
            f"{'met' if ok else 'NOT met'} ({seconds:.1f}s)"
        )
    print("all targets met" if met else "some targets not met")


if __name__ == "__main__":
    main()
