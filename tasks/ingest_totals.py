"""What an ingest keeps and what its dataset records: duplicates decided across every file (the
first occurrence in file and line order is kept), and every file's outcome added up, checked so
that each record read is accepted, quarantined or a duplicate."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from platforms.hashing import MultisetHash
from platforms.manifest import table_info
from tasks.data_stage import Contents
from tasks.ingest_files import Drops, FileTally, FileWritten, RowKey
from tasks.records import QUARANTINE_SCHEMA, TaskType
from trainer.taskspec import task_spec


@dataclass(frozen=True, slots=True)
class Totals:
    """Every file's outcome added up: what the dataset's manifest records."""

    counts: dict[str, int]  # files, read, blank, accepted, quarantined, duplicates[, unanswerable]
    reasons: dict[str, int]  # quarantine rows per kind of reason, most common first
    content_hash: str  # order-independent hash of every accepted record
    accepted_files: list[str]  # the accepted table's files, in input order
    quarantine_files: list[str]  # the quarantine table's files, in input order


def shared_rows(tallies: list[FileTally]) -> list[list[int]]:
    """For every file, the rows deduplication must look at: those whose content prefix or id
    prefix occurs more than once among the rows of every file (`FileTally`). A row whose two
    prefixes occur once has content and an id no other row has: it is kept, and no other row's
    decision depends on it. Holds one kind of prefix of every row at a time (8 bytes a row),
    sorted in place, never the keys."""
    if not tallies:
        return []
    look = [np.zeros(len(t.contents), dtype=bool) for t in tallies]
    for kind in ("contents", "ids"):
        values = np.concatenate([getattr(t, kind) for t in tallies])
        values.sort()
        repeated = np.unique(values[1:][values[1:] == values[:-1]])
        del values
        if not len(repeated):
            continue
        for mask, tally in zip(look, tallies, strict=True):
            mine = getattr(tally, kind)
            at = np.minimum(np.searchsorted(repeated, mine), len(repeated) - 1)
            mask |= repeated[at] == mine
    return [
        (np.flatnonzero(mask) if t.rows is None else t.rows[mask]).tolist()
        for mask, t in zip(look, tallies, strict=True)
    ]


def decide_duplicates(
    keys: list[list[tuple[int, RowKey]]], files: list[str], erased: frozenset[str] = frozenset()
) -> list[Drops]:
    """For every file, the rows to drop as duplicates or quarantine as id conflicts, from the
    keys of the rows that may repeat (`shared_rows`), each file's in row order; every other row
    is kept. Records whose id is in `erased` are left out by the writer.

    The first occurrence in (file, line) order is kept. A later record with the same content as
    a kept one is a duplicate; a later record with the id of a kept one but other content is
    quarantined, so ids stay unique.
    """
    seen_hash: set[str] = set()
    first_id: dict[str, str] = {}
    drops: list[Drops] = []
    for source, rows in zip(files, keys, strict=True):
        duplicates: set[int] = set()
        conflicts: dict[int, str] = {}
        for row, key in rows:
            if key.content in seen_hash:
                duplicates.add(row)
            elif key.record_id in first_id:
                conflicts[row] = first_id[key.record_id]
            else:
                seen_hash.add(key.content)
                first_id[key.record_id] = f"{source}:{key.line}"
        drops.append(Drops(frozenset(duplicates), conflicts, erased))
    return drops


def add_up(
    files: list[str], tallies: list[FileTally], written: list[FileWritten], task_type: TaskType
) -> Totals:
    """Add up every file's counts; every line read must be accepted, quarantined, a duplicate
    or left out as erased (counted only when some were).

    QA datasets also count the accepted records that are unanswerable questions, apart, and
    those whose answer offsets were found in the context (`answers_located`).
    """
    counts = Counter({"files": len(files)})
    reasons: Counter[str] = Counter()
    content = MultisetHash()
    accepted_files: list[str] = []
    quarantine_files: list[str] = []
    for tally, out in zip(tallies, written, strict=True):
        counts.update(
            read=tally.read,
            blank=tally.blank,
            accepted=out.accepted,
            quarantined=out.quarantined,
            duplicates=out.duplicates,
            erased=out.erased,
        )
        reasons.update(out.reasons)
        content.merge(MultisetHash(out.content))
        accepted_files += out.accepted_files
        quarantine_files += out.quarantine_files
    for name in ("accepted", "quarantined", "duplicates"):
        counts.setdefault(name, 0)
    if "answers" in task_spec(task_type).fields:
        counts["unanswerable"] = sum(out.unanswerable for out in written)
        if located := sum(tally.located for tally in tallies):
            counts["answers_located"] = located  # offsets found in the context
    if not counts["erased"]:
        del counts["erased"]
    kept = counts["accepted"] + counts["quarantined"] + counts["duplicates"]
    if counts["read"] != kept + counts.get("erased", 0):
        raise RuntimeError(f"ingest lost records: {dict(counts)}")  # a bug, never data
    return Totals(
        counts=dict(counts),
        reasons=dict(reasons.most_common()),
        content_hash=content.hexdigest(),
        accepted_files=accepted_files,
        quarantine_files=quarantine_files,
    )


def ingest_contents(task_type: TaskType, totals: Totals, files: list[str]) -> Contents:
    """The dataset's accepted and quarantine tables and what its manifest records."""
    return Contents(
        content_hash=totals.content_hash,
        counts=totals.counts,
        tables={
            "accepted": table_info(
                totals.counts["accepted"], totals.accepted_files, task_spec(task_type).record_schema
            ),
            "quarantine": table_info(
                totals.counts["quarantined"], totals.quarantine_files, QUARANTINE_SCHEMA
            ),
        },
        extra={"inputs": files, "quarantine_reasons": totals.reasons},
    )
