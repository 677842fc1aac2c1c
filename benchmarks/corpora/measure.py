"""What the screen leaves of labelled personal data and credentials: the shared measuring code.

`benchmarks/screen_external.py` and `tests/test_screen_external.py` both call `run`: the corpus
records (the format `build.py` writes) go through ingest's validation
(`tasks.records.validate_record`) and the screen of one partition
(`screening.scan.screen_records`) with the default `ScreenConfig`. That is the policy of
`tunegate ingest` + `tunegate screen`: `run_screen` maps `screen_partition` over ingest's
partitions, which calls `screen_records` on each with the same config (and no salt: the default
rules make no surrogates); only storage, deduplication and the Dask cluster are left out. (Checked
once: 205 dev records of validatorjs, noseyparker and wnut17 through `tunegate ingest` +
`tunegate screen` kept the same 99 records with the same redacted texts as `screen` here.)

For every labelled value it counts, in the records the screen kept:
- left whole: the value still stands in the kept text (as a word of its own);
- part left: not whole, but a piece of it of 3 or more letters or digits still does (e.g. a
  surname once the first name is redacted), a piece the text holds nowhere else;
values in quarantined records count as caught. Per corpus it counts the records kept, the
records the source marks clean that were quarantined (false drops) and those kept with a part
redacted (false findings), and, for records shaped as extractive QA, kept answers no longer at
their `answer_start`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

# The value types a corpus labels, and how a QA record's question names each.
QUESTION_LABELS = {
    "PERSON": "person's name",
    "STREET_ADDRESS": "street address",
    "PHONE_NUMBER": "phone number",
    "CREDIT_CARD": "card number",
    "EMAIL_ADDRESS": "e-mail address",
    "IBAN_CODE": "IBAN",
    "US_SSN": "social security number",
    "IP_ADDRESS": "IP address",
    "CREDENTIAL": "credential",
}
TYPES = tuple(QUESTION_LABELS)
STRUCTURED = (
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "CREDIT_CARD",
    "IBAN_CODE",
    "US_SSN",
    "IP_ADDRESS",
    "CREDENTIAL",
)
# Issue 23's targets: the most of each type that may be left whole, and the least kept.
MAX_LEFT = {**dict.fromkeys(STRUCTURED, 0.0), "PERSON": 0.02, "STREET_ADDRESS": 0.05}
MIN_KEPT = 0.70
CORPORA = (
    "presidio-tests",
    "validatorjs",
    "noseyparker",
    "usaddress",
    "libpostal",
    "usaddress-us50",
    "pyap",
    "opencage",
    "pelias",
    "usaddress-training",  # dev only: usaddress's other training lines, to tune on
    "wnut17",
    "uner-en",  # persons in English web text and news (2026-12-01)
    "libphonenumber",
    "phones-unlabelled",  # validator.js's other mobile numbers, with no phone word (2026-11-30)
    "phones-aftership",  # AfterShip phone's valid test numbers, with no phone word (2026-12-02)
)


def split_of(record_id: str) -> str:
    """`dev` or `test`, by a hash of the id: tune on dev, report test."""
    return "dev" if hashlib.sha256(record_id.encode()).digest()[0] % 2 == 0 else "test"


def load(name: str, split: str | None = None, folder: Path = HERE) -> list[dict[str, Any]]:
    """The records of one corpus (`<folder>/<name>.jsonl`), of one split or all."""
    with (folder / f"{name}.jsonl").open() as f:
        records = [json.loads(line) for line in f if line.strip()]
    return [r for r in records if split in (None, "all", r["split"])]


@dataclass
class TypeCount:
    values: int = 0
    left_whole: int = 0
    part_left: int = 0
    left_examples: list[str] = field(default_factory=list)

    @property
    def left_rate(self) -> float:
        return self.left_whole / self.values if self.values else 0.0

    @property
    def recall(self) -> float:
        return 1.0 - self.left_rate


@dataclass
class Measured:
    """What the screen did to one corpus."""

    records: int = 0
    kept: int = 0
    clean: int = 0
    clean_dropped: int = 0
    clean_redacted: int = 0
    qa_kept: int = 0
    qa_misplaced: int = 0
    types: dict[str, TypeCount] = field(default_factory=dict)
    dropped_clean_examples: list[str] = field(default_factory=list)
    redacted_clean_examples: list[str] = field(default_factory=list)

    @property
    def kept_rate(self) -> float:
        return self.kept / self.records if self.records else 0.0

    def add(self, other: Measured) -> None:
        for name in (
            "records",
            "kept",
            "clean",
            "clean_dropped",
            "clean_redacted",
            "qa_kept",
            "qa_misplaced",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.dropped_clean_examples += other.dropped_clean_examples
        self.redacted_clean_examples += other.redacted_clean_examples
        for t, c in other.types.items():
            mine = self.types.setdefault(t, TypeCount())
            mine.values += c.values
            mine.left_whole += c.left_whole
            mine.part_left += c.part_left
            mine.left_examples += c.left_examples

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["kept_rate"] = self.kept_rate
        for t, c in self.types.items():
            out["types"][t]["recall"] = c.recall
        return out


def screen(records: list[dict[str, Any]], config: Any = None) -> dict[str, dict[str, Any] | None]:
    """Each corpus record's screened record (None when quarantined), by id: ingest's validation,
    then the screen of `tunegate screen` with `config` (default: the default ScreenConfig)."""
    from screening.config import ScreenConfig
    from screening.scan import screen_records
    from tasks.records import ColumnMap, TaskType, validate_record

    config = config or ScreenConfig()
    by_task: dict[TaskType, list[dict[str, Any]]] = {}
    for r in records:
        if "answers" in r:
            task, raw = (
                TaskType.extractive_qa,
                {
                    "id": r["id"],
                    "question": r["question"],
                    "context": r["text"],
                    "answers": r["answers"],
                },
            )
        else:
            task, raw = TaskType.text_generation, {"id": r["id"], "text": r["text"]}
        by_task.setdefault(task, []).append(validate_record(task, ColumnMap(), raw))
    out: dict[str, dict[str, Any] | None] = {r["id"]: None for r in records}
    for task, batch in by_task.items():
        for kept in screen_records(task, batch, config).kept:
            out[kept["id"]] = kept
    return out


def measure(
    records: Iterable[dict[str, Any]], screened: dict[str, dict[str, Any] | None]
) -> Measured:
    """Count what `screened` (from `screen`) left of the labelled values of `records`."""
    m = Measured()
    for r in records:
        m.records += 1
        m.clean += bool(r["clean"])
        kept = screened[r["id"]]
        for s in r["spans"]:
            m.types.setdefault(s["type"], TypeCount()).values += 1
        if kept is None:
            if r["clean"]:
                m.clean_dropped += 1
                m.dropped_clean_examples.append(r["text"][:200])
            continue
        m.kept += 1
        text = kept.get("context", kept.get("text", ""))
        if r["clean"] and text != r["text"]:
            m.clean_redacted += 1
            m.redacted_clean_examples.append(text[:200])
        if "answers" in r:
            m.qa_kept += 1
            answers = kept["answers"]
            m.qa_misplaced += any(
                text[a : a + len(t)] != t
                for t, a in zip(answers["text"], answers["answer_start"], strict=True)
            )
        elsewhere = _without_spans(r["text"], r["spans"])
        for s in r["spans"]:
            count = m.types[s["type"]]
            if _stands(s["value"], text):
                count.left_whole += 1
                count.left_examples.append(s["value"])
            elif any(_stands(p, text) and not _stands(p, elsewhere) for p in _pieces(s["value"])):
                count.part_left += 1
    return m


def _stands(value: str, text: str) -> bool:
    """`value` occurs in `text`, not inside a longer word."""
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text) is not None


def _pieces(value: str) -> list[str]:
    return [p for p in re.split(r"[\W_]+", value) if len(p) >= 3]


def _without_spans(text: str, spans: list[dict[str, Any]]) -> str:
    for s in spans:
        text = text[: s["start"]] + " " * (s["end"] - s["start"]) + text[s["end"] :]
    return text


def run(records: list[dict[str, Any]], config: Any = None) -> Measured:
    """Screen `records` and measure what was left."""
    return measure(records, screen(records, config))


def generated(names: int, credentials: int, seed: int = 101) -> dict[str, list[dict[str, Any]]]:
    """This project's own corpora (benchmarks/corpora/names/, benchmarks/corpora/credentials/)
    in the same format, for contrast: what the published figures were measured on."""
    from benchmarks.corpora.credentials.corpus import corpus as credential_corpus
    from benchmarks.corpora.names.corpus import generate as generate_names

    out: dict[str, list[dict[str, Any]]] = {"generated-names": [], "generated-credentials": []}
    for i, t in enumerate(generate_names(names, seed=seed)):
        spans = [{"type": "PERSON", "value": t.text[a:b], "start": a, "end": b} for a, b in t.names]
        out["generated-names"].append(_generated("generated-names", i, t.text, spans))
    planted, clean = credential_corpus(credentials, credentials, seed)
    for i, t in enumerate(planted + clean):
        spans = []
        for value in dict.fromkeys(t.secrets):
            spans += [
                {"type": "CREDENTIAL", "value": value, "start": m.start(), "end": m.end()}
                for m in re.finditer(re.escape(value), t.text)
            ]
        out["generated-credentials"].append(_generated("generated-credentials", i, t.text, spans))
    return out


def _generated(source: str, n: int, text: str, spans: list[dict[str, Any]]) -> dict[str, Any]:
    rid = f"{source}-{n:05d}"
    return {
        "id": rid,
        "source": source,
        "split": split_of(rid),
        "text": text,
        "spans": spans,
        "clean": not spans,
    }


def types_seen(measured: Iterable[Measured]) -> list[str]:
    seen = Counter(t for m in measured for t in m.types)
    return [t for t in TYPES if t in seen]
