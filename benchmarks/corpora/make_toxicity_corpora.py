"""Rebuild the toxicity corpora of benchmarks/corpora/ from local clones of their repositories.

    python benchmarks/corpora/make_toxicity_corpora.py --mirrors DIR

DIR holds one bare or full clone per source, named `owner+name/repo` (the sources, their
commits and licences are in benchmarks/corpora/SOURCES.md). Every record is a `chat` record
(`{"id", "messages": [{"role", "content"}], "split"}`); `split` is `dev` or `test` by the parity
of the first byte of sha256(id), so a record keeps its half whatever else is added. Samples are
drawn with a fixed seed and capped at 2,000 records per corpus. Run once by hand; the JSONL files
are committed, nothing is fetched at test or run time.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent
CAP = 2000
TASKMASTER = "google-research-datasets+Taskmaster"


def split_of(record_id: str) -> str:
    return "dev" if hashlib.sha256(record_id.encode()).digest()[0] % 2 == 0 else "test"


def _show(mirrors: Path, repo: str, path: str) -> str:
    git = mirrors / repo / "repo"
    return subprocess.run(
        ["git", "-C", str(git), "show", f"HEAD:{path}"], check=True, capture_output=True
    ).stdout.decode("utf-8", errors="replace")


def _record(
    record_id: str, turns: list[tuple[str, str]], split: str | None = None
) -> dict[str, Any]:
    messages = [{"role": role, "content": text} for role, text in turns if text.strip()]
    return {"id": record_id, "messages": messages, "split": split or split_of(record_id)}


def _write(name: str, records: list[dict[str, Any]]) -> None:
    records = [r for r in records if r["messages"]]
    random.Random(7).shuffle(records)
    records = sorted(records[:CAP], key=lambda r: r["id"])
    with (OUT / f"{name}.jsonl").open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    dev = sum(r["split"] == "dev" for r in records)
    print(f"{name}: {len(records)} records ({dev} dev, {len(records) - dev} test)")


def topical_chat(mirrors: Path) -> None:
    """Whole Topical-Chat conversations (two crowd workers chatting about a topic)."""
    records = []
    for part in ("test_freq", "test_rare"):
        data = json.loads(_show(mirrors, "alexa+Topical-Chat", f"conversations/{part}.json"))
        for conv_id, conv in data.items():
            turns = [
                ("user" if t["agent"] == "agent_1" else "assistant", t["message"])
                for t in conv["content"]
            ]
            records.append(_record(f"topical-chat-{conv_id}", turns))
    _write("everyday_topical_chat", records)


def taskmaster_coffee(mirrors: Path) -> None:
    """Taskmaster-4's coffee-ordering dialogues (one crowd worker writing both the customer and
    the barista, from three dozen scenarios: changed minds, missing items, complaints). Added
    after the toxicity screen was tuned, to measure it on dialogue it never saw: every record is
    `test`, none `dev`."""
    records = []
    for i in range(8):
        data = json.loads(_show(mirrors, TASKMASTER, f"TM-4-2024/data/data_{i:02d}.json"))
        for dialog in data:
            turns = [
                ("user" if u["speaker"] == "user" else "assistant", u["text"])
                for u in dialog["utterances"]
            ]
            records.append(_record(f"taskmaster4-{dialog['conversation_id']}", turns, "test"))
    _write("everyday_taskmaster_coffee", records)


def _convabuse_rows(mirrors: Path) -> list[dict[str, str]]:
    rows = []
    for part in ("train", "valid", "test"):
        text = _show(mirrors, "amandacurry+convabuse", f"2_splits/ConvAbuseEMNLP{part}.csv")
        rows += list(csv.DictReader(io.StringIO(text)))
    return rows


def _votes(row: dict[str, str]) -> dict[str, int]:
    """How many annotators chose each abuse level (1 not abusive ... -3 very strongly)."""
    votes = dict.fromkeys(("1", "0", "-1", "-2", "-3"), 0)
    for key, value in row.items():
        if key.startswith("Annotator") and "_is_abuse." in key and value.strip() == "1":
            votes[key.split("_is_abuse.")[1]] += 1
    return votes


_IDENTITY_OR_SEXUAL = ("sexist", "sex_harassment", "racist", "homophobic", "transphobic", "ableist")


def _named(row: dict[str, str], types: tuple[str, ...]) -> int:
    """How many annotators named at least one of these abuse types."""
    named = set()
    for key, value in row.items():
        annotator, _, label = key.partition("_")
        if annotator.startswith("Annotator") and label in types and value.strip() == "1":
            named.add(annotator)
    return len(named)


def convabuse(mirrors: Path) -> None:
    """ConvAbuse: what users said to two chatbots, one annotated turn a record. Every annotator
    said `not abusive`: everyday; a majority said strongly or very strongly abusive, explicit
    (not implied), and named identity-based abuse or sexual harassment (not only an insult to the
    bot's intelligence): clearly toxic."""
    everyday, toxic = [], []
    for row in _convabuse_rows(mirrors):
        votes = _votes(row)
        n = sum(votes.values())
        if not n:
            continue
        rid = f"convabuse-{int(float(row['example_id']))}"
        turn = [("user", row["user"])]  # the annotated turn alone (the bot may echo abuse)
        if votes["1"] == n:
            everyday.append(_record(rid, turn))
        elif (
            votes["-2"] + votes["-3"] > n / 2
            and _named(row, _IDENTITY_OR_SEXUAL) > n / 2
            and _named(row, ("explicit",)) > n / 2
        ):
            toxic.append(_record(rid, turn))
    _write("everyday_convabuse_clean", everyday)
    _write("toxic_convabuse_strong", toxic)


def davidson(mirrors: Path) -> None:
    """Davidson et al.: tweets a majority of annotators labelled hate speech (class 0)."""
    text = _show(mirrors, "t-davidson+hate-speech-and-offensive-language", "data/labeled_data.csv")
    records = [
        _record(f"davidson-{row['']}", [("user", row["tweet"])])
        for row in csv.DictReader(io.StringIO(text))
        if row["class"] == "0"
    ]
    _write("toxic_davidson_hate", records)


def code_chat(mirrors: Path) -> None:
    """Chat with code: GPTeacher's code-generation set (bare code answers) and AlpacaEval model
    outputs that hold a Markdown code fence."""
    gpteacher = json.loads(_show(mirrors, "teknium1+GPTeacher", "Codegen/codegen-instruct.json"))
    records = []
    for i, item in enumerate(gpteacher):
        ask = item["instruction"] + ("\n" + item["input"] if item["input"] else "")
        records.append(
            _record(f"gpteacher-code-{i}", [("user", ask), ("assistant", item["response"])])
        )
    fenced = [
        _record(f"alpaca-eval-{model}-{i}", [("user", ask), ("assistant", answer)])
        for model, i, ask, answer in alpaca_eval_fenced(mirrors)
    ]
    random.Random(3).shuffle(records)
    random.Random(5).shuffle(fenced)
    _write("code_chat", records[: CAP // 2] + fenced[: CAP // 2])


def alpaca_eval_fenced(
    mirrors: Path, files: int | None = None
) -> Iterator[tuple[str, int, str, str]]:
    """(model, index, instruction, output) of every AlpacaEval model output that holds a Markdown
    code fence, from the first `files` model output files (None: all) the clone holds."""
    git = mirrors / "tatsu-lab+alpaca_eval" / "repo"
    listing = subprocess.run(
        ["git", "-C", str(git), "ls-tree", "-r", "--name-only", "HEAD", "results"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    for path in sorted(p for p in listing if p.endswith("/model_outputs.json"))[:files]:
        try:
            outputs = json.loads(_show(mirrors, "tatsu-lab+alpaca_eval", path))
        except (subprocess.CalledProcessError, json.JSONDecodeError):
            continue  # a file the clone does not hold
        model = path.split("/")[1]
        for i, item in enumerate(outputs):
            if "```" in (item.get("output") or ""):
                yield model, i, item["instruction"], item["output"]


# HateCheck's functional tests (Röttger et al., ACL 2021): which ones a screen must drop (explicit
# hate: derogation, dehumanisation, threats, slurs and profanity aimed at a protected group, also
# as a question, an opinion, a negation or a second sentence) and which are ordinary sentences it
# must keep (a group named neutrally or warmly, hate negated, dislike of a thing, a slur's other
# sense). Left out of both: implicit derogation, counter-speech quoting hate, reclaimed slurs,
# profanity not aimed at anyone, abuse of non-protected targets (who may drop them is a policy,
# not a test), and the spelling variants (`HATECHECK_DISGUISED`, a corpus of their own).
HATECHECK_EXPLICIT = (
    "derog_neg_emote_h", "derog_neg_attrib_h", "derog_dehum_h", "threat_dir_h", "threat_norm_h",
    "slur_h", "profanity_h", "ref_subs_clause_h", "ref_subs_sent_h", "negate_pos_h",
    "phrase_question_h", "phrase_opinion_h",
)  # fmt: skip
HATECHECK_DISGUISED = (
    "spell_char_swap_h", "spell_char_del_h", "spell_space_del_h", "spell_space_add_h",
    "spell_leet_h",
)  # fmt: skip
HATECHECK_ORDINARY = (
    "ident_neutral_nh",
    "ident_pos_nh",
    "negate_neg_nh",
    "target_obj_nh",
    "slur_homonym_nh",
)


def hatecheck_rows(mirrors: Path) -> list[dict[str, str]]:
    """HateCheck's 3,728 test cases, each with its `split`: the half of its *template*, so that
    no sentence of a test half differs from one of the dev half only in the group it names."""
    text = _show(mirrors, "paul-rottger+hatecheck-data", "test_suite_cases.csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    for row in rows:
        row["split"] = split_of(f"hatecheck-template-{row['templ_id']}")
    return rows


def hatecheck(mirrors: Path) -> None:
    """HateCheck: explicit hate a screen must drop, its disguised spellings, ordinary sentences
    about the same groups it must keep (one sentence a record, split by template)."""
    corpora = {
        "toxic_hatecheck_explicit": HATECHECK_EXPLICIT,
        "toxic_hatecheck_disguised": HATECHECK_DISGUISED,
        "everyday_hatecheck": HATECHECK_ORDINARY,
    }
    corpus_of = {kind: name for name, kinds in corpora.items() for kind in kinds}
    chosen: dict[str, list[dict[str, Any]]] = {name: [] for name in corpora}
    for row in hatecheck_rows(mirrors):
        if name := corpus_of.get(row["functionality"]):
            record = _record(f"hatecheck-{row['case_id']}", [("user", row["test_case"].strip())])
            chosen[name].append({**record, "split": row["split"]})
    for name, records in chosen.items():
        _write(name, records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True)
    args = parser.parse_args()
    topical_chat(args.mirrors)
    convabuse(args.mirrors)
    davidson(args.mirrors)
    code_chat(args.mirrors)
    hatecheck(args.mirrors)
    taskmaster_coffee(args.mirrors)


if __name__ == "__main__":
    main()
