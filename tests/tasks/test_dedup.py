"""Ingest's deduplication without every row's keys in one place: the stage looks only at the
rows whose content or id may repeat, and decides exactly as a scan of every row would."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest

from tasks.ingest_files import FileRead, id_digest, read_file
from tasks.ingest_totals import decide_duplicates, shared_rows
from tasks.records import ColumnMap, TaskType, record_hash


def _write(path: Path, rows: list[tuple[str, str]]) -> str:
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": rid,
                    "messages": [
                        {"role": "user", "content": "hi"},
                        {"role": "assistant", "content": text},
                    ],
                }
            )
            + "\n"
            for rid, text in rows
        )
    )
    return str(path)


def _read(uri: str) -> FileRead:
    return read_file(uri, "jsonl", {}, task=TaskType("chat"), columns=ColumnMap())


def _every_row_scan(reads: list[FileRead], erased: set[str]) -> list[tuple[set, dict]]:
    """The rule, on every row in (file, line) order: the first occurrence is kept; a later row
    with a kept row's content is a duplicate; one with a kept row's id and other content is
    an id conflict; erased ids are left out."""
    seen: set[str] = set()
    first: dict[str, str] = {}
    out = []
    for read in reads:
        duplicates, conflicts = set(), {}
        for row, record in enumerate(read.accepted):
            content = record_hash(record)
            if record["id"] in erased:
                continue
            if content in seen:
                duplicates.add(row)
            elif record["id"] in first:
                conflicts[row] = first[record["id"]]
            else:
                seen.add(content)
                first[record["id"]] = f"{read.source}:{read.keys.lines[row]}"
        out.append((duplicates, conflicts))
    return out


def _decide(reads: list[FileRead], erased: set[str], narrow: int | None = None):
    digests = frozenset(id_digest(i) for i in erased)
    tallies = [read.tally(digests) for read in reads]
    if narrow:  # prefixes cut to a few values: most rows share one with another
        tallies = [
            dataclasses.replace(t, contents=t.contents % narrow, ids=t.ids % narrow)
            for t in tallies
        ]
    rows = shared_rows(tallies)
    keys = [list(zip(r, read.keys_at(r), strict=True)) for read, r in zip(reads, rows, strict=True)]
    drops = decide_duplicates(keys, [read.source for read in reads], frozenset(erased))
    return rows, [(set(d.duplicates), d.conflicts) for d in drops]


@pytest.mark.parametrize("narrow", [None, 3])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_deciding_on_repeated_rows_only_is_the_scan_of_every_row(
    tmp_path: Path, seed: int, narrow: int | None
) -> None:
    rng = random.Random(seed)
    reads = [
        _read(
            _write(
                tmp_path / f"part-{f}.jsonl",
                [(f"id-{rng.randrange(40)}", f"text {rng.randrange(40)}") for _ in range(60)],
            )
        )
        for f in range(3)
    ]
    erased = {f"id-{rng.randrange(40)}" for _ in range(3)}
    expected = _every_row_scan(reads, erased)
    assert any(d for d, _ in expected) and any(c for _, c in expected)  # both cases occur
    assert _decide(reads, erased, narrow)[1] == expected


def test_the_stage_fetches_the_keys_of_repeated_rows_only(tmp_path: Path) -> None:
    rows = [(f"r{i}", f"unique text {i}") for i in range(500)]
    rows[100] = ("r100", "unique text 7")  # the content of row 7 again
    rows[200] = ("r9", "another text")  # row 9's id, other content
    first = _read(_write(tmp_path / "a.jsonl", rows))
    second = _read(_write(tmp_path / "b.jsonl", [("x1", "unique text 3"), ("x2", "new")]))
    looked_at, decided = _decide([first, second], set())
    assert looked_at == [[3, 7, 9, 100, 200], [0]]  # of 502 rows, the six that repeat
    assert decided == [({100}, {200: f"{first.source}:10"}), ({0}, {})]
