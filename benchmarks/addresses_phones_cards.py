"""Street addresses, phones, cards and IBANs written by others: recall, false findings on prose.

    python benchmarks/addresses_phones_cards.py

Recall on benchmarks/corpora/addresses_phones_cards_dev.jsonl (public sources, see
benchmarks/corpora/SOURCES.md): per type, the values redacted whole (every character inside a
finding the default policy acts on), in part, or missed; Presidio's own phone and card recognizers
on the same texts for comparison. Street addresses also on both halves of the usaddress corpus
(`whole_addresses`): the labelled street, and whether the city, state and ZIP after it were
redacted with it (an address is its whole span, not its street line). False findings: every paragraph of the README/description of
every installed Python package (`*.dist-info/METADATA`, text nobody here wrote), with the
findings listed for a person to judge (a licence's postal address is a true one). Prints the
time per text of each finder. The same false findings on the turns of the everyday and code chat
corpora of benchmarks/corpora/ (Topical-Chat, ConvAbuse's not-abusive turns, code chat), whose
numbers are prices, years, counts and code: every finding there is a false one.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections import Counter
from email import message_from_string
from importlib import metadata
from pathlib import Path

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from screening.config import DEFAULT_PII_RULES
from screening.finders.addresses import find_addresses
from screening.finders.cards import find_cards
from screening.finders.ibans import find_ibans
from screening.finders.phones import find_phones

DEV = Path(__file__).parent / "corpora" / "addresses_phones_cards_dev.jsonl"
FINDERS = {
    "STREET_ADDRESS": find_addresses,
    "PHONE_NUMBER": find_phones,
    "CREDIT_CARD": find_cards,
    "IBAN_CODE": find_ibans,
}
CHATS = ("everyday_topical_chat", "everyday_convabuse_clean", "code_chat")


def acted_on(entity: str, text: str) -> list[tuple[int, int]]:
    rule = DEFAULT_PII_RULES[entity]
    return [(s.start, s.end) for s in FINDERS[entity](text) if s.score >= rule.min_score]


def coverage(spans: list[tuple[int, int]], start: int, end: int) -> str:
    covered = sum(1 for i in range(start, end) if any(a <= i < b for a, b in spans))
    length = sum(1 for i in range(start, end))
    return "whole" if covered == length else "part" if covered else "missed"


def presidio_spans(entity: str, text: str) -> list[tuple[int, int]]:
    from presidio_analyzer.predefined_recognizers import CreditCardRecognizer, PhoneRecognizer

    recognizer = {"PHONE_NUMBER": PhoneRecognizer, "CREDIT_CARD": CreditCardRecognizer}[entity]()
    results = recognizer.analyze(text, [entity], None)
    return [(r.start, r.end) for r in results if r.score >= DEFAULT_PII_RULES[entity].min_score]


def prose_paragraphs() -> list[tuple[str, str]]:
    paragraphs = []
    for dist in metadata.distributions():
        body = dist.read_text("METADATA") or ""
        text = message_from_string(body).get_payload()
        if not isinstance(text, str):
            continue
        for para in re.split(r"\n\s*\n", text):
            if para.strip():
                paragraphs.append((dist.metadata["Name"], para))
    return paragraphs


def whole_addresses(split: str) -> str:
    """The usaddress corpus of screen_external.py (hand-labelled US address lines), the finder
    alone: its street value redacted whole / in part / missed, and the rest of the address after
    it (city, state, ZIP: what the corpus does not label, but what makes the address whole) left
    in part where the street was found."""
    from benchmarks.corpora.measure import load

    street, rest, rest_left = Counter(), 0, 0
    for record in load("usaddress", split):
        spans = acted_on("STREET_ADDRESS", record["text"])
        for s in record["spans"]:
            street[coverage(spans, s["start"], s["end"])] += 1
            after = list(re.finditer(r"[^\W_]{2,}", record["text"][s["end"] :]))
            if after and coverage(spans, s["start"], s["end"]) == "whole":
                rest += 1
                rest_left += any(
                    coverage(spans, s["end"] + m.start(), s["end"] + m.end()) != "whole"
                    for m in after
                )
    n = sum(street.values())
    return (
        f"usaddress ({split}): street {n}: whole {street['whole']} "
        f"({100 * street['whole'] / n:.1f}%), part {street['part']}, missed {street['missed']}; "
        f"of the {rest} found whole with a city/state/ZIP after them, {rest_left} left a part of it"
    )


def chat_turns(name: str) -> list[tuple[str, str]]:
    with (DEV.parent / f"{name}.jsonl").open() as f:
        return [
            (name, m["content"]) for line in f for m in json.loads(line)["messages"] if m["content"]
        ]


def main() -> None:
    rows = [json.loads(line) for line in DEV.read_text().splitlines()]
    print(f"{len(rows)} labelled examples ({DEV.name})")
    for entity in FINDERS:
        ours, theirs = Counter(), Counter()
        missed = []
        for row in rows:
            if row["entity"] != entity:
                continue
            at = row["text"].index(row["value"])
            end = at + len(row["value"])
            result = coverage(acted_on(entity, row["text"]), at, end)
            ours[result] += 1
            if result != "whole":
                missed.append(f"  {result}: {row['value']!r} ({row['source']})")
            if entity != "STREET_ADDRESS":
                theirs[coverage(presidio_spans(entity, row["text"]), at, end)] += 1
        n = sum(ours.values())
        if not n:
            continue
        print(
            f"{entity}: {n} values, whole {ours['whole']} ({100 * ours['whole'] / n:.1f}%), "
            f"part {ours['part']}, missed {ours['missed']}"
            + (
                f"; Presidio's recognizer: whole {theirs['whole']} ({100 * theirs['whole'] / n:.1f}%)"
                if theirs
                else ""
            )
        )
        print("\n".join(missed[:15]))

    for split in ("dev", "test"):
        print(whole_addresses(split))

    paragraphs = prose_paragraphs()
    chars = sum(len(p) for _, p in paragraphs)
    print(
        f"\nprose: {len(paragraphs)} paragraphs of {len({n for n, _ in paragraphs})} package "
        f"descriptions, {chars / 1e6:.1f} M characters"
    )
    false_findings(paragraphs, show=40)
    for name in CHATS:
        turns = chat_turns(name)
        print(
            f"\n{name}: {len(turns)} turns, {sum(len(t) for _, t in turns) / 1e6:.1f} M characters"
        )
        false_findings(turns, show=10)


def false_findings(texts: list[tuple[str, str]], show: int) -> None:
    """Per finder: the findings the default policy acts on, the texts with one, the time."""
    for entity, finder in FINDERS.items():
        start_time = time.perf_counter()
        hits, with_one = [], 0
        for name, text in texts:
            found = [s for s in finder(text) if s.score >= DEFAULT_PII_RULES[entity].min_score]
            with_one += bool(found)
            hits += [f"  {name}: {text[s.start : s.end]!r}" for s in found]
        seconds = time.perf_counter() - start_time
        print(
            f"{entity}: {len(hits)} findings in {with_one} of {len(texts)} texts "
            f"({seconds * 1e6 / len(texts):.0f} µs per text)"
        )
        if hits:
            print("\n".join(hits[:show]))


if __name__ == "__main__":
    main()
