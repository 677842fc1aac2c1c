"""The one record format of the external corpora, and the hash that samples and splits them.

Each line of a corpus is one record a user could ingest:

    {"id", "source", "split", "text", "spans": [{"type", "value", "start", "end", "label"?}],
     "clean", "question"?, "answers"?}

Everything that chooses (a sample of a source, the QA third, a split) hashes stable names, so a
rebuild from the same inputs writes the same files.
"""

from __future__ import annotations

import hashlib
from typing import Any

from benchmarks.corpora.measure import QUESTION_LABELS, split_of


def record(
    source: str,
    n: int,
    text: str,
    spans: list[dict[str, Any]],
    split: str | None = None,
) -> dict[str, Any]:
    """One corpus record; spans sorted and checked against the text; its split by the id's hash
    unless given (a dev-only corpus)."""
    rid = f"{source}-{n:04d}"
    spans = sorted(spans, key=lambda s: (s["start"], s["end"]))
    for s in spans:
        assert text[s["start"] : s["end"]] == s["value"], (rid, s)
    out: dict[str, Any] = {
        "id": rid,
        "source": source,
        "split": split or split_of(rid),
        "text": text,
        "spans": spans,
        "clean": not spans,
    }
    if spans and stable_hash(rid, "qa") % 3 == 0:  # a third also as an extractive-QA record
        first = spans[0]
        out["question"] = f"What is the {QUESTION_LABELS[first['type']]}?"
        out["answers"] = {"text": [first["value"]], "answer_start": [first["start"]]}
    return out


def stable_hash(*parts: str) -> int:
    """A stable 64-bit hash of `parts` joined by `/` (the same on every run and machine)."""
    return int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:8], "big")


def sample(items: list[Any], n: int, salt: str) -> list[Any]:
    """At most `n` items, chosen by a hash of their position (stable across rebuilds)."""
    if len(items) <= n:
        return items
    order = sorted(range(len(items)), key=lambda i: stable_hash(salt, str(i)))
    return [items[i] for i in sorted(order[:n])]
