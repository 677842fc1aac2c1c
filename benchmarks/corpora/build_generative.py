"""Build the generative corpora of `benchmarks/generative.py` from their sources' files.

Three corpora written by others, each a few hundred records of one task, in the records
`tunegate run` reads (`benchmarks/corpora/SOURCES.md` names the sources, commits and licences):

- `summarization_crd3.jsonl`: CRD3's summary chunks of two sentences (`data/aligned data/c=2/
  *_2_0.json`) with the dialogue turns they are aligned to, where those turns are a ~200-word
  dialogue: {id, document, summary, split, source};
- `chat_sgd.jsonl`: Schema-Guided Dialogue conversations (`test/dialogues_001.json` to
  `dialogues_010.json`) cut after one of the assistant's turns: {id, messages, split, source};
- `qa_squadshifts_wiki.json`: SQuADShifts' new Wikipedia test set (`datasets/new_wiki_v1.0.json`),
  a few paragraphs of every article, as a SQuAD file whose articles carry their `split`.

`split` is `dev` or `test` by `measure.split_of` (the first byte of a SHA-256): of the record's id,
and for QA of the article's title, so the two halves share no article. Every choice (which
chunks, which cut, which paragraphs) is made by a hash, not at random: the same sources give the
same files.

    python benchmarks/corpora/build_generative.py --crd3 CRD3/data/aligned\\ data/c=2 \\
        --sgd dstc8-schema-guided-dialogue/test --squadshifts squadshifts/new_wiki_v1.0.json

Never used: SQuAD's `Super_Bowl_50` and `University_of_Notre_Dame` articles (held out for
acceptance): an input holding either is refused before anything is written.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.corpora.measure import split_of

HERE = Path(__file__).resolve().parent
SUMMARIZATION = HERE / "summarization_crd3.jsonl"
CHAT = HERE / "chat_sgd.jsonl"
QA = HERE / "qa_squadshifts_wiki.json"

REFUSED_TITLES = frozenset({"super_bowl_50", "university_of_notre_dame"})

DIALOGUE_WORDS = (120, 320)  # a summarised dialogue's length, in words
SUMMARY_WORDS = (12, 80)
MIN_TURNS = 4
SUMMARIES = 400
CONVERSATIONS = 400
SGD_FILES = [f"dialogues_{i:03d}.json" for i in range(1, 11)]
PARAGRAPHS_PER_ARTICLE = 4


def rank(key: str) -> str:
    """The order records are drawn in: a hash of their id, so no choice is at random."""
    return hashlib.sha256(f"tunegate-generative\0{key}".encode()).hexdigest()


def words(text: str) -> int:
    return len(text.split())


# --- summarization: CRD3


def speaker(names: Iterable[str]) -> str:
    """CRD3's upper-case speaker names as a chat log writes them: `MATT` -> `Matt`."""
    return " and ".join(name.strip().title() for name in names if name.strip()) or "Unknown"


def crd3_records(folder: Path) -> list[dict[str, Any]]:
    """Every summary chunk of two sentences whose aligned turns make a ~200-word dialogue."""
    found: dict[tuple[str, int, int], dict[str, Any]] = {}
    for path in sorted(folder.glob("*_2_0.json")):
        episode = path.name.split("_")[0]
        for chunk in json.loads(path.read_text()):
            turns = chunk["TURNS"]
            lines = [
                f"{speaker(t['NAMES'])}: {' '.join(u.strip() for u in t['UTTERANCES'])}"
                for t in turns
            ]
            document = "\n".join(lines)
            summary = " ".join(chunk["CHUNK"].split())
            if not (
                DIALOGUE_WORDS[0] <= words(document) <= DIALOGUE_WORDS[1]
                and SUMMARY_WORDS[0] <= words(summary) <= SUMMARY_WORDS[1]
                and len(turns) >= MIN_TURNS
            ):
                continue
            span = chunk["ALIGNMENT"]
            key = (episode, span["TURN START"], span["TURN END"])
            record_id = f"crd3-{episode}-{span['CHUNK ID']:03d}"
            found.setdefault(  # one summary per stretch of dialogue
                key,
                {"id": record_id, "document": document, "summary": summary, "source": "crd3"},
            )
    chosen = sorted(found.values(), key=lambda r: rank(r["id"]))[:SUMMARIES]
    return [{**r, "split": split_of(r["id"])} for r in sorted(chosen, key=lambda r: r["id"])]


# --- chat: Schema-Guided Dialogue


def sgd_records(folder: Path) -> list[dict[str, Any]]:
    """Each dialogue cut after one of the assistant's turns (not its first, not its goodbye),
    the turn chosen by a hash of the dialogue's id."""
    records = []
    for name in SGD_FILES:
        for dialogue in json.loads((folder / name).read_text()):
            turns = dialogue["turns"]
            replies = [
                i
                for i, t in enumerate(turns)
                if t["speaker"] == "SYSTEM" and 0 < i < len(turns) - 2
            ]
            if len(replies) < 2:
                continue
            record_id = f"sgd-{dialogue['dialogue_id']}"
            cut = replies[1:][int(rank(record_id), 16) % len(replies[1:])]
            messages = [
                {
                    "role": "user" if t["speaker"] == "USER" else "assistant",
                    "content": " ".join(t["utterance"].split()),
                }
                for t in turns[: cut + 1]
            ]
            records.append(
                {
                    "id": record_id,
                    "messages": messages,
                    "services": dialogue["services"],
                    "source": "sgd",
                }
            )
    chosen = sorted(records, key=lambda r: rank(r["id"]))[:CONVERSATIONS]
    return [{**r, "split": split_of(r["id"])} for r in sorted(chosen, key=lambda r: r["id"])]


# --- extractive QA: SQuADShifts' new Wikipedia articles


def refuse_held_out(titles: Iterable[str]) -> None:
    held = [t for t in titles if _slug(t) in REFUSED_TITLES]
    if held:
        raise SystemExit(f"refused: the input holds held-out SQuAD articles {held}")


def _slug(title: str) -> str:
    return re.sub(r"\s+", "_", title.strip()).lower()


def squadshifts_document(path: Path) -> dict[str, Any]:
    """A few paragraphs of every article (chosen by a hash of their first question's id), all
    their questions and every reference answer, as SQuAD JSON; each article gets its split."""
    source = json.loads(path.read_text())
    refuse_held_out(a["title"] for a in source["data"])
    articles = []
    for article in source["data"]:
        paragraphs = [p for p in article["paragraphs"] if p["qas"]]
        paragraphs.sort(key=lambda p: rank(p["qas"][0]["id"]))
        kept = paragraphs[:PARAGRAPHS_PER_ARTICLE]
        kept.sort(key=lambda p: article["paragraphs"].index(p))  # the article's own order
        articles.append(
            {"title": article["title"], "split": split_of(article["title"]), "paragraphs": kept}
        )
    return {"version": f"squadshifts-new_wiki-{source.get('version', '')}", "data": articles}


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    with path.open("w") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crd3", type=Path, help="CRD3's `data/aligned data/c=2` folder")
    parser.add_argument("--sgd", type=Path, help="Schema-Guided Dialogue's `test` folder")
    parser.add_argument("--squadshifts", type=Path, help="SQuADShifts' new_wiki_v1.0.json")
    args = parser.parse_args()
    if args.squadshifts:  # refused first: nothing is written from an input holding them
        document = squadshifts_document(args.squadshifts)
        QA.write_text(json.dumps(document, ensure_ascii=False) + "\n")
        questions = sum(len(p["qas"]) for a in document["data"] for p in a["paragraphs"])
        print(f"{QA.name}: {len(document['data'])} articles, {questions} questions")
    if args.crd3:
        records = crd3_records(args.crd3)
        write_jsonl(SUMMARIZATION, records)
        print(f"{SUMMARIZATION.name}: {len(records)} dialogues")
    if args.sgd:
        records = sgd_records(args.sgd)
        write_jsonl(CHAT, records)
        print(f"{CHAT.name}: {len(records)} conversations")


if __name__ == "__main__":
    main()
