"""Rebuild the toxicity screen's classifier, `screening/data/toxicity_classifier.npz`, offline.

    python screening/data/build/make_toxicity_classifier.py --mirrors DIR [--report]

DIR holds the clones benchmarks/corpora/make_toxicity_corpora.py reads (`owner+name/repo`; sources, commits and
licences in benchmarks/corpora/SOURCES.md). The training data is public labelled text the
benchmark's test halves do not hold:

- abusive (1): Davidson et al.'s hate-speech tweets of the dev half and a sample of its
  offensive-language tweets (class 1; no test half holds them); ConvAbuse user turns a majority
  of annotators called strongly or very strongly abusive;
- not abusive (0): Davidson's tweets of class 2 (neither); ConvAbuse turns every annotator
  called not abusive; the sentences of Topical-Chat's validation conversations and of the dev
  half of its test conversations; the prose sentences of GPTeacher's code exchanges and of
  AlpacaEval answers with code; ordinary tweets (TweetEval's emoji-prediction tweets), so that
  the look of a tweet (`RT`, handles, links: left out of the features too) is no sign of abuse.

Every record of a test half (by id) and every text equal to one of a test half (lower case,
spaces collapsed) is left out: the test halves are read here only to leave them out.

The features are `screening.toxicity.classifier.classifier_features` (hashed character 2-5-grams and
word 1-2-grams, nothing stored but the weights); a logistic regression is fitted on them. Its
drop cut-off is calibrated on out-of-fold scores (5 folds, a record's sentences in one fold):
the lowest score at which no more than 0.2% of the not-abusive Topical-Chat conversations,
ConvAbuse turns and code exchanges and no more than 0.5% of the ordinary tweets would be dropped
(a conversation by its worst sentence).
`--report` prints the out-of-fold recall and false drops at a range of cut-offs.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
EXTERNAL = ROOT / "benchmarks" / "corpora"  # the corpora, and the readers of their sources
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(EXTERNAL))

from make_toxicity_corpora import (  # noqa: E402
    _convabuse_rows,
    _show,
    _votes,
    alpaca_eval_fenced,
    split_of,
)

from screening.code_text import prose  # noqa: E402
from screening.toxicity.classifier import (  # noqa: E402
    CLASSIFIER,
    CLASSIFIER_FEATURES,
    classifier_features,
    classifier_text,
)
from screening.toxicity.score import sentences  # noqa: E402

TEST_CORPORA = (
    "everyday_topical_chat",
    "everyday_convabuse_clean",
    "code_chat",
    "toxic_convabuse_strong",
    "toxic_davidson_hate",
    "everyday_hatecheck",
    "toxic_hatecheck_explicit",
    "toxic_hatecheck_disguised",
)
OFFENSIVE_SAMPLE = 8000  # Davidson class 1 tweets drawn (of 19,190)
TOPICAL_SAMPLE = 60  # validation conversations' sentences: every one; this many per cap
CODE_SAMPLE = 3000  # code exchanges drawn
TWEET_SAMPLE = 8000  # ordinary tweets drawn (of TweetEval's 45,000 emoji-prediction tweets)
C = 4.0  # inverse regularisation of the logistic regression
FALSE_DROPS = {"topical-chat": 0.002, "convabuse-clean": 0.002, "code": 0.002, "tweets": 0.005}
SEED = 11


def _key(text: str) -> str:
    return classifier_text(text)


def held_out() -> tuple[set[str], set[str]]:
    """The ids and the texts (as `_key`) of every test-half record, to leave out."""
    ids, texts = set(), set()
    for name in TEST_CORPORA:
        with (EXTERNAL / f"{name}.jsonl").open(encoding="utf-8") as f:
            for record in map(json.loads, f):
                if record["split"] != "test":
                    continue
                ids.add(record["id"])
                for message in record["messages"]:
                    texts.add(_key(message["content"]))
                    texts.update(_key(s) for s in sentences(message["content"]))
    return ids, texts


class Examples:
    """Training units: text, label, group (a record: its sentences share a fold), source."""

    def __init__(self, ids: set[str], texts: set[str]) -> None:
        self.ids, self.held_texts = ids, texts
        self.text: list[str] = []
        self.label: list[int] = []
        self.group: list[str] = []
        self.source: list[str] = []
        self.left_out = 0

    def add(self, record_id: str, units: list[str], label: int, source: str) -> None:
        if record_id in self.ids:
            self.left_out += 1
            return
        for unit in units:
            if not unit.strip():
                continue
            if _key(unit) in self.held_texts:
                self.left_out += 1
                continue
            self.text.append(unit)
            self.label.append(label)
            self.group.append(record_id)
            self.source.append(source)


def davidson(mirrors: Path, ex: Examples) -> None:
    text = _show(mirrors, "t-davidson+hate-speech-and-offensive-language", "data/labeled_data.csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    offensive = [r for r in rows if r["class"] == "1"]
    random.Random(SEED).shuffle(offensive)
    chosen = {r[""] for r in offensive[:OFFENSIVE_SAMPLE]}
    for row in rows:
        rid = f"davidson-{row['']}"
        if row["class"] == "0" and split_of(rid) == "dev":
            ex.add(rid, [prose(row["tweet"])], 1, "davidson-hate")
        elif row["class"] == "1" and row[""] in chosen:
            ex.add(rid, [prose(row["tweet"])], 1, "davidson-offensive")
        elif row["class"] == "2":
            ex.add(rid, [prose(row["tweet"])], 0, "davidson-neither")


def convabuse(mirrors: Path, ex: Examples) -> None:
    seen = set()
    for row in _convabuse_rows(mirrors):
        votes = _votes(row)
        n = sum(votes.values())
        rid = f"convabuse-{int(float(row['example_id']))}"
        if not n or rid in seen:
            continue
        seen.add(rid)
        if votes["1"] == n:
            ex.add(rid, [prose(row["user"])], 0, "convabuse-clean")
        elif votes["-2"] + votes["-3"] > n / 2:
            ex.add(rid, [prose(row["user"])], 1, "convabuse-strong")


def topical_chat(mirrors: Path, ex: Examples) -> None:
    for part in ("valid_freq", "valid_rare", "test_freq", "test_rare"):
        data = json.loads(_show(mirrors, "alexa+Topical-Chat", f"conversations/{part}.json"))
        for conv_id, conv in data.items():
            rid = f"topical-chat-{conv_id}"
            if part.startswith("test") and split_of(rid) != "dev":
                continue
            units = [s for turn in conv["content"] for s in sentences(turn["message"])]
            ex.add(rid, units, 0, "topical-chat")


def code_chat(mirrors: Path, ex: Examples) -> None:
    gpteacher = json.loads(_show(mirrors, "teknium1+GPTeacher", "Codegen/codegen-instruct.json"))
    exchanges = [
        (f"gpteacher-code-{i}", item["instruction"] + "\n" + item["input"], item["response"])
        for i, item in enumerate(gpteacher)
    ]
    exchanges += [
        (f"alpaca-eval-{model}-{i}", ask, answer)
        for model, i, ask, answer in alpaca_eval_fenced(mirrors, files=40)
    ]
    random.Random(SEED).shuffle(exchanges)
    for rid, ask, answer in exchanges[:CODE_SAMPLE]:
        ex.add(rid, sentences(ask) + sentences(answer), 0, "code")


def tweets(mirrors: Path, ex: Examples) -> None:
    """Ordinary tweets: TweetEval's emoji-prediction training tweets (SemEval 2018), drawn."""
    text = _show(mirrors, "cardiffnlp+tweeteval", "datasets/emoji/train_text.txt")
    lines = text.splitlines()
    random.Random(SEED).shuffle(lines)
    for i, line in enumerate(lines[:TWEET_SAMPLE]):
        ex.add(f"tweeteval-emoji-{i}", [prose(line)], 0, "tweets")


def _fit(x, y):
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=C, solver="liblinear", class_weight="balanced", max_iter=200)
    return model.fit(x, y)


def out_of_fold(x, y: np.ndarray, groups: list[str]) -> np.ndarray:
    from sklearn.model_selection import GroupKFold

    scores = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=5).split(x, y, groups):
        scores[test] = _fit(x[train], y[train]).predict_proba(x[test])[:, 1]
    return scores


def _by_record(ex: Examples, scores: np.ndarray, source: str) -> np.ndarray:
    worst: dict[str, float] = defaultdict(float)
    for group, src, score in zip(ex.group, ex.source, scores, strict=True):
        if src == source:
            worst[group] = max(worst[group], score)
    return np.array(list(worst.values()))


def calibrate(ex: Examples, scores: np.ndarray, report: bool) -> float:
    records = {s: _by_record(ex, scores, s) for s in sorted(set(ex.source))}
    cuts = np.round(np.arange(0.50, 1.0, 0.01), 2)
    chosen = 0.99
    for cut in cuts[::-1]:
        ok = all((records[s] >= cut).mean() <= limit for s, limit in FALSE_DROPS.items())
        if not ok:
            break
        chosen = float(cut)
    if report:
        print("cut-off " + " ".join(f"{s[:16]:>16s}" for s in records))
        for cut in [*cuts[::5].tolist(), chosen]:
            line = " ".join(f"{(records[s] >= cut).mean() * 100:15.2f}%" for s in records)
            print(f"{cut:7.2f} {line}")
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--out-of-fold", type=Path, help="write each unit's out-of-fold score")
    args = parser.parse_args()
    ex = Examples(*held_out())
    for build in (davidson, convabuse, tweets, topical_chat, code_chat):
        build(args.mirrors, ex)
    y = np.array(ex.label)
    counts = defaultdict(int)
    for s in ex.source:
        counts[s] += 1
    print(f"{len(y)} units ({y.sum()} abusive), {ex.left_out} left out; {dict(counts)}")
    x = classifier_features(ex.text)
    scores = out_of_fold(x, y, ex.group)
    drop_at = calibrate(ex, scores, args.report)
    if args.out_of_fold:
        with args.out_of_fold.open("w", encoding="utf-8") as f:
            for row in zip(ex.text, ex.label, ex.group, ex.source, scores.tolist(), strict=True):
                f.write(json.dumps(row) + "\n")
    model = _fit(x, y)
    weights = model.coef_[0].astype(np.float16)
    assert weights.shape == (2 * CLASSIFIER_FEATURES,)
    np.savez_compressed(
        CLASSIFIER,
        weights=weights,
        bias=np.float64(model.intercept_[0]),
        drop_at=np.float64(drop_at),
    )
    print(f"{CLASSIFIER.name}: {CLASSIFIER.stat().st_size / 1e6:.1f} MB, drop at {drop_at}")


if __name__ == "__main__":
    main()
