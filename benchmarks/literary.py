"""The screen on public-domain prose: names of characters and places kept, contact data removed.

    python benchmarks/literary.py                          # default and literary profiles
    python benchmarks/literary.py --profile literary --n 60

Screens the passages of `benchmarks/corpora/literary_odyssey.jsonl` (Butler's Odyssey, books
IX-XII and XXI-XXII, with e-mails, phones and credentials planted in one passage of five; SOURCES.md)
as text-generation records, as `tunegate screen` does (`screening.scan.screen_records`), once
per profile. Prints, per profile: the share of the occurrences of the book's character and place
names (`NAMES`, written down from the text) left in the kept records (a quarantined record keeps
none), the share of records kept, and the planted values left anywhere in the kept records.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from screening.config import ScreenConfig
from screening.scan import screen_records

CORPUS = Path(__file__).resolve().parent / "corpora" / "literary_odyssey.jsonl"

# Characters, gods and places of these books, as Butler writes them (Latin names for the gods).
NAMES = (
    "Ulysses", "Laertes", "Alcinous", "Arete", "Polyphemus", "Neptune", "Jove", "Minerva",
    "Circe", "Eurylochus", "Elpenor", "Aeolus", "Tiresias", "Anticlea", "Agamemnon",
    "Achilles", "Ajax", "Hercules", "Proserpine", "Scylla", "Charybdis", "Hyperion", "Mercury",
    "Perimedes", "Antiphates", "Telemachus", "Penelope", "Eumaeus", "Philoetius", "Antinous",
    "Eurymachus", "Amphinomus", "Melanthius", "Euryclea", "Leiodes", "Phemius", "Medon",
    "Agelaus", "Ctesippus", "Apollo", "Troy", "Ithaca", "Trojans", "Achaeans", "Cyclopes",
    "Ismarus", "Lotus", "Aeaea", "Hades", "Erebus", "Thrinacia", "Thebes", "Crete",
    "Lacedaemon", "Argos", "Sicily",
)  # fmt: skip
_NAME = re.compile(r"\b(" + "|".join(NAMES) + r")\b")


def load(n: int | None = None) -> list[dict]:
    with CORPUS.open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    return rows[:n] if n else rows


@dataclass(frozen=True)
class Measured:
    profile: str
    records: int
    kept: int
    names: int  # occurrences of NAMES in the passages
    names_kept: int  # ... left in the kept records
    planted: int
    planted_left: list[str]  # the types of the planted values left in kept records
    seconds: float

    def line(self) -> str:
        return (
            f"{self.profile:9s} names kept {self.names_kept}/{self.names} "
            f"({100 * self.names_kept / max(self.names, 1):.1f}%), records kept "
            f"{self.kept}/{self.records} ({100 * self.kept / max(self.records, 1):.1f}%), "
            f"planted left {len(self.planted_left)}/{self.planted} {sorted(self.planted_left)} "
            f"({self.seconds:.0f} s)"
        )


def measure(rows: list[dict], config: ScreenConfig) -> Measured:
    started = time.perf_counter()
    records = [{"id": r["id"], "text": r["text"]} for r in rows]
    screening = screen_records("text-generation", records, config)
    kept = {r["id"]: r["text"] for r in screening.kept}
    names = names_kept = 0
    left = []
    for row in rows:
        found = _NAME.findall(row["text"])
        names += len(found)
        text = kept.get(row["id"])
        if text is None:
            continue
        remaining = _NAME.findall(text)
        names_kept += min(len(remaining), len(found))
        left += [p["type"] for p in row["planted"] if p["value"] in text]
    return Measured(
        profile=config.profile,
        records=len(rows),
        kept=len(kept),
        names=names,
        names_kept=names_kept,
        planted=sum(len(r["planted"]) for r in rows),
        planted_left=left,
        seconds=time.perf_counter() - started,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", action="append", choices=["personal", "literary", "code"])
    parser.add_argument("--n", type=int, default=None, help="the first N passages only")
    args = parser.parse_args()
    rows = load(args.n)
    for profile in args.profile or ["personal", "literary"]:
        print(measure(rows, ScreenConfig(profile=profile)).line(), flush=True)


if __name__ == "__main__":
    main()
