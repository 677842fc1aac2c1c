"""The per-file half of ingest, run on Dask workers, and the typed values it hands the stage.

A worker reads and validates one input file (`read_file`) and keeps the result until the stage
has decided which rows are duplicates (`Drops`); a second worker call then writes what was kept
(`write_file`) and returns what it wrote (`FileWritten`). With a `Spill`, the accepted records
are written to pending chunk files of `partition_rows` as they are read, so a worker holds one
chunk and the packed row keys (`RowKeys`, 56 bytes a row), never a whole file's records.

The stage never gathers every row's keys: each file hands it 16 bytes a row (`FileTally`: an
8-byte prefix of the row's content digest and of its id digest), from which it finds the rows
whose content or id may occur twice, and it fetches the full keys of those rows only
(`FileRead.keys_at`).
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from platforms.hashing import MultisetHash
from platforms.keys import RawCipher
from platforms.store import Store, read_table, write_table
from tasks.readers import read_lines
from tasks.records import (
    QUARANTINE_SCHEMA,
    ColumnMap,
    Invalid,
    TaskType,
    identity_hash,
    offsets_missing,
    record_hash,
    validate_record,
)
from trainer.taskspec import task_spec

STAGE = "ingest"


CONTENT_BYTES = 32  # a `record_hash` digest
ID_BYTES = 16  # `id_digest`: equal ids, equal digests; two ids sharing one: about 1 in 2**64 at 1e9


def id_digest(record_id: str) -> bytes:
    """A record id as deduplication compares it: a 16-byte digest, whatever the id's length."""
    return hashlib.blake2b(record_id.encode(), digest_size=ID_BYTES).digest()


@dataclass(frozen=True, slots=True)
class RowKey:
    """What deduplication needs to know about one accepted row."""

    content: str  # hash of the canonical record (`record_hash`)
    record_id: str  # the record's id as `id_digest` (hex): ids compare equal by it
    line: int  # line (or row) number in its source file


@dataclass(frozen=True, slots=True)
class RowKeys:
    """Every accepted row's `RowKey` of one file, packed: 56 bytes a row on the worker."""

    contents: bytes  # CONTENT_BYTES a row: the `record_hash` digest
    ids: bytes  # ID_BYTES a row: `id_digest` of the record's id
    lines: array  # line numbers ("q")

    def __len__(self) -> int:
        return len(self.lines)

    def content(self, row: int) -> str:
        return self.contents[row * CONTENT_BYTES : (row + 1) * CONTENT_BYTES].hex()

    def id(self, row: int) -> bytes:
        return self.ids[row * ID_BYTES : (row + 1) * ID_BYTES]

    def key(self, row: int) -> RowKey:
        return RowKey(self.content(row), self.id(row).hex(), self.lines[row])

    def prefixes(self) -> tuple[np.ndarray, np.ndarray]:
        """Per row, the first 8 bytes of its content digest and of its id digest (uint64):
        equal keys have equal prefixes, so a key whose prefix occurs once occurs once."""
        contents = np.frombuffer(self.contents, dtype="<u8").reshape(-1, CONTENT_BYTES // 8)
        ids = np.frombuffer(self.ids, dtype="<u8").reshape(-1, ID_BYTES // 8)
        return contents[:, 0].copy(), ids[:, 0].copy()


class _KeysBuilder:
    """`RowKeys` as a file is read."""

    def __init__(self) -> None:
        self.contents = bytearray()
        self.ids = bytearray()
        self.lines = array("q")

    def add(self, record: dict[str, Any], line: int) -> None:
        self.contents += bytes.fromhex(record_hash(record))
        self.ids += id_digest(record["id"])
        self.lines.append(line)

    def build(self) -> RowKeys:
        return RowKeys(bytes(self.contents), bytes(self.ids), self.lines)


@dataclass(frozen=True, slots=True)
class Spill:
    """Where `read_file` writes accepted records as it goes, `rows` at a time."""

    work_uri: str  # the dataset being written (its pending/ folder holds the chunks)
    store_uri: str
    store_options: dict[str, Any]
    rows: int  # records per chunk (the partition size)
    index: int  # the file's position among the inputs (names its chunks)
    cipher: RawCipher | None = None  # encrypts the chunks (ingest.raw_retention), None: plain


@dataclass(frozen=True, slots=True)
class FileRead:
    """What one input file produced, kept on the worker until deduplication decides."""

    source: str  # the file's URI
    accepted: tuple[dict[str, Any], ...]  # valid canonical records, in file order (no Spill)
    keys: RowKeys  # one per accepted record, same order
    quarantine: tuple[dict[str, Any], ...]  # quarantine rows of lines that failed to parse/validate
    read: int  # non-blank lines read
    blank: int  # blank lines skipped
    pending: tuple[str, ...] = ()  # with a Spill: the chunk files of the accepted records, in order
    fmt: str = ""  # the format it was read in
    located: int = 0  # accepted QA records whose answer offsets were found in the context

    @property
    def source_tag(self) -> str:
        """Where its records came from, as the dataset's content hash counts it: the input's
        name (not its folder) and format."""
        return f"{self.fmt}:{posixpath.basename(self.source.rstrip('/'))}"

    def tally(self, erased: frozenset[bytes] = frozenset()) -> FileTally:
        """The small part of this result the stage fetches from the worker: counts, and the
        key prefixes of the rows whose id is not in `erased` (`id_digest`s)."""
        contents, ids = self.keys.prefixes()
        live = None
        if erased:
            gone = [row for row in range(len(self.keys)) if self.keys.id(row) in erased]
            if gone:
                live = np.delete(np.arange(len(self.keys), dtype=np.int64), gone)
                contents, ids = contents[live], ids[live]
        return FileTally(
            read=self.read,
            blank=self.blank,
            located=self.located,
            rows=live,
            contents=contents,
            ids=ids,
        )

    def keys_at(self, rows: list[int]) -> list[RowKey]:
        """The full keys of some rows (those whose prefixes occur twice)."""
        return [self.keys.key(row) for row in rows]


@dataclass(frozen=True, slots=True)
class FileTally:
    """The part of a `FileRead` the stage needs to decide duplicates and count lines: 16
    bytes a row for the rows deduplication looks at (every row whose id is not erased)."""

    read: int  # non-blank lines read
    blank: int  # blank lines skipped
    located: int  # accepted QA records whose answer offsets were found in the context
    rows: np.ndarray | None  # the rows those are (int64), None: every accepted row
    contents: np.ndarray  # their content digests' 8-byte prefixes (uint64)
    ids: np.ndarray  # their id digests' 8-byte prefixes (uint64)


@dataclass(frozen=True, slots=True)
class Drops:
    """The accepted rows of one file that deduplication takes out, by row index."""

    duplicates: frozenset[int]  # same content as an earlier record: counted, not kept
    conflicts: dict[int, str]  # known id with other content -> where the id was first kept
    erased_ids: frozenset[str] = frozenset()  # ids erased from the store (tunegate erase):
    # accepted rows and quarantined lines with one are left out


@dataclass(frozen=True, slots=True)
class FileWritten:
    """What `write_file` wrote for one input file."""

    accepted: int  # records written to the accepted table
    quarantined: int  # rows written to the quarantine table
    duplicates: int  # records dropped as duplicates
    unanswerable: int  # accepted QA records with no answer (SQuAD v2's unanswerable questions)
    reasons: dict[str, int]  # quarantine rows per kind of reason (numbers and ids left out)
    content: int  # `MultisetHash.value` of the accepted records' `identity_hash`
    accepted_files: tuple[str, ...]  # accepted table files, relative to the dataset
    quarantine_files: tuple[str, ...]  # quarantine table files, relative to the dataset
    erased: int = 0  # records (and quarantined lines) left out: their ids were erased


def read_file(
    uri: str,
    fmt: str,
    options: dict[str, Any],
    spill: Spill | None = None,
    *,
    task: TaskType,
    columns: ColumnMap,
    max_chars: int | None = None,
) -> FileRead:
    """Read and validate every line of one file. A record with a text field over `max_chars`
    characters is quarantined. Without a `spill` nothing is written and the accepted records come
    back in memory; with one they go to pending chunks as they are read."""
    accepted: list[dict[str, Any]] = []
    keys = _KeysBuilder()
    quarantine: list[dict[str, Any]] = []
    pending: list[str] = []
    read = blank = located = 0
    store = Store(spill.store_uri, spill.store_options) if spill else None

    def flush() -> None:
        if spill is None or store is None or not accepted:
            return
        uri = f"{spill.work_uri}/pending/{spill.index:05d}-{len(pending):05d}.parquet"
        write_table(store, uri, accepted, task_spec(task).record_schema, spill.cipher)
        pending.append(uri)
        accepted.clear()

    max_bytes = 8 * max_chars if max_chars else None
    for line in read_lines(uri, fmt, task, columns, options, max_bytes):
        if line.blank:
            blank += 1
            continue
        read += 1
        if line.error is not None:
            quarantine.append(_quarantine_row(uri, line.number, None, line.error, line.raw))
            continue
        try:
            record = validate_record(task, columns, line.obj)
            if max_chars:
                _check_length(task, record, max_chars)
        except Invalid as exc:
            quarantine.append(
                _quarantine_row(uri, line.number, _raw_id(line.obj, columns), str(exc), line.raw)
            )
            continue
        located += "answers" in record and offsets_missing(columns, line.obj)
        accepted.append(record)
        keys.add(record, line.number)
        if spill is not None and len(accepted) >= spill.rows:
            flush()
    flush()
    return FileRead(
        uri,
        tuple(accepted),
        keys.build(),
        tuple(quarantine),
        read,
        blank,
        tuple(pending),
        fmt,
        located,
    )


def _accepted_rows(
    result: FileRead, store: Store, cipher: RawCipher | None
) -> Iterator[dict[str, Any]]:
    """The accepted records of a file in order: from memory, or chunk by chunk (each chunk file
    removed once read)."""
    yield from result.accepted
    for uri in result.pending:
        yield from read_table(store, uri, cipher)
        store.remove(uri)


def _check_length(task: TaskType, record: dict[str, Any], max_chars: int) -> None:
    for name, text in task_spec(task).text_fields(record):
        if len(text) > max_chars:
            raise Invalid(
                f"{name} has {len(text)} characters, over ingest.max_record_chars={max_chars}"
            )


def accepted_part(file_index: int, chunk: int) -> str:
    """An accepted partition's name in the ingest dataset: the index of the input it was read
    from (in the manifest's `inputs`) and its chunk of that input."""
    return f"accepted/part-{file_index:05d}-{chunk:05d}.parquet"


def input_index(part_uri: str) -> int | None:
    """The index (in the manifest's `inputs`) of the input an accepted partition came from (its
    name rewritten by an erasure too: `part-00001-00000.erased-<id>.parquet`); None for a name
    of another form."""
    found = re.match(r"part-(\d+)-\d+", part_uri.rsplit("/", 1)[-1])
    return int(found.group(1)) if found else None


def write_file(
    result: FileRead,
    drops: Drops,
    file_index: int,
    *,
    work_uri: str,
    store_uri: str,
    store_options: dict[str, Any],
    task_type: TaskType,
    partition_rows: int,
    cipher: RawCipher | None = None,
) -> FileWritten:
    """Write the rows of one file that deduplication kept, and its quarantine (both raw
    records: encrypted with `cipher` when given)."""
    store = Store(store_uri, store_options)
    keep: list[dict[str, Any]] = []  # at most one partition at a time
    quarantine = [q for q in result.quarantine if q["id"] not in drops.erased_ids]
    erased = len(result.quarantine) - len(quarantine)
    duplicates = kept = unanswerable = 0
    content = MultisetHash()
    accepted_files: list[str] = []

    def write_partition() -> None:
        name = accepted_part(file_index, len(accepted_files))
        write_table(store, f"{work_uri}/{name}", keep, task_spec(task_type).record_schema, cipher)
        accepted_files.append(name)
        keep.clear()

    keys = result.keys
    row = -1
    for row, record in enumerate(_accepted_rows(result, store, cipher)):
        if record["id"] in drops.erased_ids:
            erased += 1
        elif row in drops.duplicates:
            duplicates += 1
        elif (first := drops.conflicts.get(row)) is not None:
            reason = f"duplicate id {record['id']!r} with other content (first at {first})"
            quarantine.append(
                _quarantine_row(result.source, keys.lines[row], record["id"], reason, "")
            )
        else:
            keep.append(record)
            content.add(identity_hash(keys.content(row), record["id"], result.source_tag))
            kept += 1
            unanswerable += "answers" in record and not record["answers"]["text"]
            if len(keep) == partition_rows:
                write_partition()
    if row + 1 != len(keys):
        raise RuntimeError(f"{result.source}: {row + 1} records read back of {len(keys)}")
    if keep:
        write_partition()
    quarantine_files = []
    if quarantine:
        name = f"quarantine/part-{file_index:05d}.parquet"
        write_table(store, f"{work_uri}/{name}", quarantine, QUARANTINE_SCHEMA, cipher)
        quarantine_files.append(name)
    return FileWritten(
        accepted=kept,
        quarantined=len(quarantine),
        duplicates=duplicates,
        unanswerable=unanswerable,
        reasons=dict(Counter(_reason_kind(q["reason"]) for q in quarantine)),
        content=content.value,
        accepted_files=tuple(accepted_files),
        quarantine_files=tuple(quarantine_files),
        erased=erased,
    )


def _reason_kind(reason: str) -> str:
    """Group reasons that differ only in numbers or ids, for the counts table."""
    return re.sub(
        r"'[^']*' with other content \(first at [^)]*\)",
        "with other content",
        re.sub(r"(?<![\w-])\d+", "N", reason),
    )


def _quarantine_row(
    source: str, line: int, record_id: str | None, reason: str, raw: str
) -> dict[str, Any]:
    return {
        "source": source,
        "line": line,
        "id": record_id,
        "stage": STAGE,
        "reason": reason,
        "raw": raw,
    }


def _raw_id(obj: Any, columns: ColumnMap) -> str | None:
    value = obj.get(columns.id_key) if isinstance(obj, dict) else None
    return str(value) if isinstance(value, str | int) else None
