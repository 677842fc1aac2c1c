"""ingest: read the inputs with Dask, validate, deduplicate, quarantine with reasons.

Inputs are JSON lines, CSV, Parquet, SQuAD JSON, Arrow files and Hugging Face `datasets` folders
(tasks/readers.py). Nothing is lost: every non-blank line (row, SQuAD question) read ends up
accepted, quarantined (with a reason) or counted as a duplicate of an earlier record, and
`read = accepted + quarantined + duplicates` is checked before the dataset is published.

Its tables hold the raw records, with the personal data and credentials the screen removes later:
by `ingest.raw_retention` they are encrypted at rest with a key derived from the store's signing
key (`encrypt`, the default), encrypted and deleted once the screened data is approved
(`delete-after-approval`, `retire_raw`), or kept plain (`keep`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

import fsspec
from distributed import Client, Future
from prefect import task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field

from platforms.approvals import ApprovalRecord
from platforms.backends import Backends
from platforms.blob import AzureStorageConfig, storage_options
from platforms.hashing import MultisetHash, combine_hashes, sha256_text, stable_json
from platforms.keys import RawCipher
from platforms.manifest import DatasetRef, table_info
from platforms.store import Store
from tasks.data_stage import Contents, DatasetBuild, stage_dataset
from tasks.datasets_folders import group_listing
from tasks.ingest_files import (
    STAGE,
    Drops,
    FileRead,
    FileTally,
    FileWritten,
    Spill,
    read_file,
    write_file,
)
from tasks.readers import FORMATS, detect_format, reads_plain_text
from tasks.records import QUARANTINE_SCHEMA, ColumnMap, TaskType
from trainer.taskspec import task_spec

log = logging.getLogger(__name__)
RAW_TABLES = ["accepted", "quarantine"]  # an ingest dataset's tables: both hold raw records
RawRetention = Literal["encrypt", "delete-after-approval", "keep"]


class IngestConfig(BaseModel):
    """Which files to read and how."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    inputs: list[str] = Field(
        default_factory=list,
        description="Files, directories or globs; local paths or az://container/path. "
        "Empty: `tunegate run` generates sample data.",
    )
    format: Literal["auto", "jsonl", "csv", "parquet", "squad", "arrow", "hf", "text"] = Field(
        "auto",
        description="Input format; auto picks it from each file's extension (.jsonl, .csv, "
        ".parquet, .arrow; .json: SQuAD when the file is one object with a `data` list, else JSON "
        "lines; .txt: plain text, its documents separated by blank lines, for text-generation) "
        "and reads a folder holding state.json or dataset_dict.json as a datasets folder.",
    )
    max_record_chars: int = Field(
        100_000,
        ge=1_000,
        le=1_000_000,
        description="Longest text field a record may have, in characters; longer records are "
        "quarantined (a JSON line over 8 times this many bytes without being parsed), so one "
        "huge record cannot stall or crash the screen (spaCy stops at 1,000,000).",
    )
    raw_retention: RawRetention = Field(
        "encrypt",
        description="How the ingest dataset keeps the raw records (with the personal data and "
        "credentials the screen removes): encrypt: encrypted at rest with a key derived from "
        "the approval key, which lives outside the store; delete-after-approval: encrypted, "
        "and deleted once the screened data is approved (a later run that has to screen them "
        "again reads the inputs again); keep: plain Parquet, kept until deleted by hand.",
    )


def expand_inputs(
    inputs: list[str],
    azure: AzureStorageConfig,
    task: TaskType | str | None = None,
    *,
    allow_empty: bool = False,
) -> list[str]:
    """Every input the inputs name, sorted; a ValueError names an input that matches nothing
    (with `allow_empty`, such an input adds nothing: a scheduled run's empty inbox).

    An input is a file or a `datasets` folder: a folder met in a directory, or matched by a glob
    together with its marker file, is one input, never its Arrow and JSON files one by one. A
    `.txt` file met in a directory is an input of a `task` whose records are raw text only (for
    another, a note beside the data)."""
    plain_text = task is not None and reads_plain_text(task)
    if not inputs:
        raise ValueError("ingest.inputs is empty: give at least one file, directory or glob")
    files: list[str] = []
    for spec in inputs:
        fs, path = fsspec.core.url_to_fs(spec, **storage_options(spec, azure))
        protocol = spec.split("://", 1)[0] + "://" if "://" in spec else ""
        if any(ch in path for ch in "*?["):
            matches = fs.glob(path, detail=True)
            found = _inputs_among(
                fs,
                named=[m for m, info in matches.items() if info["type"] != "directory"],
                directories=[m for m, info in matches.items() if info["type"] == "directory"],
                plain_text=plain_text,
            )
        elif fs.isdir(path):
            found = _inputs_among(fs, named=[], directories=[path], plain_text=plain_text)
        elif fs.exists(path):
            found = [path]
            _regular_file(spec, path, protocol)
        else:
            found = []
        if not found and not allow_empty:
            raise ValueError(f"ingest.inputs: nothing matches {spec!r}")
        files.extend(protocol + p if protocol else p for p in found)
    return sorted(dict.fromkeys(files))


def _regular_file(spec: str, path: str, protocol: str) -> None:
    """A local input must be a regular file (or a folder): a device (`/dev/zero`), a FIFO or a
    socket would be read forever or block until someone writes."""
    if protocol in ("", "file://") and not stat.S_ISREG(os.stat(path).st_mode):
        raise ValueError(
            f"ingest.inputs: {spec!r} is not a regular file (a device, FIFO or socket); "
            "give a file or a folder"
        )


def _inputs_among(fs: Any, named: list[str], directories: list[str], plain_text: bool) -> list[str]:
    """The named files and the files with a known extension anywhere under the directories,
    except that a datasets folder among them (the one a marker file sits in) is one input."""
    listed = {p for d in directories for p in fs.find(d)}
    folders, files = group_listing(sorted({*named, *listed}))
    kept = [p for p in files if p not in listed or _known_extension(p, plain_text)]
    return sorted([*folders, *kept])


def fingerprint(uri: str, azure: AzureStorageConfig) -> str:
    """An input's identity for the cache key: its content hash locally, its ETag on Blob; a
    datasets folder's is made of those of every file in it."""
    options = storage_options(uri, azure)
    fs, path = fsspec.core.url_to_fs(uri, **options)
    info = fs.info(path)
    if info["type"] != "directory":
        return _file_fingerprint(fs, uri, path, info, remote=bool(options))
    files = fs.find(path, detail=True)
    return combine_hashes(
        f"{p[len(path) :]}={_file_fingerprint(fs, p, p, files[p], remote=bool(options))}"
        for p in sorted(files)
    )


def _file_fingerprint(fs: Any, uri: str, path: str, info: dict[str, Any], remote: bool) -> str:
    if remote:
        return sha256_text(stable_json([uri, info.get("etag"), info.get("size")]))
    digest = hashlib.sha256()
    with fs.open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def ingest_key(
    task_type: TaskType,
    columns: ColumnMap,
    config: IngestConfig,
    files: list[str],
    fingerprints: list[str],
    partition_rows: int,
) -> tuple[str, str]:
    """(location key, config hash) for an ingest of these files under this config."""
    config_hash = sha256_text(
        stable_json(
            {
                "task": task_type,
                "columns": columns.model_dump(),
                "format": config.format,
                "partition_rows": partition_rows,
            }
        )
    )
    key = combine_hashes(
        [STAGE, config_hash, *(f"{u}={h}" for u, h in zip(files, fingerprints, strict=True))]
    )
    return key, config_hash


def run_ingest(
    client: Client,
    store: Store,
    task_type: TaskType,
    columns: ColumnMap,
    config: IngestConfig,
    azure: AzureStorageConfig,
    partition_rows: int,
    *,
    reread: bool = False,
) -> DatasetRef:
    """Ingest the configured inputs into `{store}/datasets/ingest/{key}` (or reuse it). A
    dataset whose raw records were deleted after approval is reused (its content hash and
    counts stand), unless `reread`: then the inputs are read again into it."""
    files = expand_inputs(config.inputs, azure, task_type)
    fingerprints = [fingerprint(f, azure) for f in files]
    key, config_hash = ingest_key(task_type, columns, config, files, fingerprints, partition_rows)
    cipher = raw_cipher(store, config)
    if reread and (old := store.find_dataset(STAGE, key)) is not None and raw_removed(store, old):
        store.remove(old.uri, recursive=True)

    def build(dataset: DatasetBuild) -> Contents:
        spills = [
            Spill(
                dataset.writer.work_uri,
                store.uri,
                store.storage_options,
                partition_rows,
                i,
                cipher,
            )
            for i in range(len(files))
        ]
        reads: list[Future] = []
        try:
            reads = _start_reads(client, files, task_type, columns, config, azure, spills)
            tallies: list[FileTally] = client.gather(client.map(FileRead.tally, reads, pure=False))
            drops = _decide_duplicates(tallies, files)
            written = _write_files(dataset, reads, drops, task_type, partition_rows, cipher)
        finally:
            client.cancel(reads)
        pending = f"{dataset.writer.work_uri}/pending"  # emptied chunk by chunk by write_file
        if store.exists(pending):
            store.remove(pending, recursive=True)
        contents = _contents(task_type, _add_up(files, tallies, written, task_type), files)
        contents.extra["raw_retention"] = config.raw_retention
        if cipher is not None:
            contents.extra["encrypted_with_key"] = cipher.key_id
        return contents

    ref = stage_dataset(
        client,
        store,
        STAGE,
        key,
        task=task_type.value,
        parent_hashes=fingerprints,
        config_hash=config_hash,
        build=build,
    )
    if not ref.reused:
        log.info("ingest: %s", _summary(ref.counts))
    return ref


@dataclass(frozen=True, slots=True)
class _Totals:
    """Every file's outcome added up: what the dataset's manifest records."""

    counts: dict[str, int]  # files, read, blank, accepted, quarantined, duplicates[, unanswerable]
    reasons: dict[str, int]  # quarantine rows per kind of reason, most common first
    content_hash: str  # order-independent hash of every accepted record
    accepted_files: list[str]  # the accepted table's files, in input order
    quarantine_files: list[str]  # the quarantine table's files, in input order


def _start_reads(
    client: Client,
    files: list[str],
    task_type: TaskType,
    columns: ColumnMap,
    config: IngestConfig,
    azure: AzureStorageConfig,
    spills: list[Spill],
) -> list[Future]:
    """Read and validate every file on the cluster; each `FileRead` stays on its worker, its
    accepted records in pending chunks of the dataset being written."""
    options = [storage_options(uri, azure) for uri in files]
    formats = [
        input_format(uri, config.format, opts) for uri, opts in zip(files, options, strict=True)
    ]
    return client.map(
        read_file,
        files,
        formats,
        options,
        spills,
        task=task_type,
        columns=columns,
        max_chars=config.max_record_chars,
        pure=False,
    )


def _decide_duplicates(tallies: list[FileTally], files: list[str]) -> list[Drops]:
    """For every file, the accepted rows to drop as duplicates or quarantine as id conflicts.

    The first occurrence in (file, line) order is kept. A later record with the same content is a
    duplicate; a later record with a known id but other content is quarantined, so ids stay unique.
    """
    seen_hash: set[str] = set()
    first_id: dict[str, str] = {}
    drops: list[Drops] = []
    for source, tally in zip(files, tallies, strict=True):
        duplicates: set[int] = set()
        conflicts: dict[int, str] = {}
        for row, key in enumerate(tally.keys):
            if key.content in seen_hash:
                duplicates.add(row)
            elif key.record_id in first_id:
                conflicts[row] = (
                    f"duplicate id {key.record_id!r} with other content "
                    f"(first at {first_id[key.record_id]})"
                )
            else:
                seen_hash.add(key.content)
                first_id[key.record_id] = f"{source}:{key.line}"
        drops.append(Drops(duplicates=frozenset(duplicates), conflicts=conflicts))
    return drops


def _write_files(
    dataset: DatasetBuild,
    reads: list[Future],
    drops: list[Drops],
    task_type: TaskType,
    partition_rows: int,
    cipher: RawCipher | None,
) -> list[FileWritten]:
    """Write what deduplication kept of every file, on the worker that read it."""
    return dataset.map(
        write_file,
        reads,
        drops,
        list(range(len(reads))),
        description="ingest: write",
        task_type=task_type,
        partition_rows=partition_rows,
        cipher=cipher,
    )


def _add_up(
    files: list[str], tallies: list[FileTally], written: list[FileWritten], task_type: TaskType
) -> _Totals:
    """Add up every file's counts; every line read must be accepted, quarantined or a duplicate.

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
    if counts["read"] != counts["accepted"] + counts["quarantined"] + counts["duplicates"]:
        raise RuntimeError(f"ingest lost records: {dict(counts)}")  # a bug, never data
    return _Totals(
        counts=dict(counts),
        reasons=dict(reasons.most_common()),
        content_hash=content.hexdigest(),
        accepted_files=accepted_files,
        quarantine_files=quarantine_files,
    )


def _contents(task_type: TaskType, totals: _Totals, files: list[str]) -> Contents:
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


def _summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in counts.items())


def input_format(uri: str, configured: str, options: dict[str, Any]) -> str:
    """The format an input is read in: the configured one; for `auto` its extension's, and a
    directory `expand_inputs` kept is a datasets folder (`hf`)."""
    if configured != "auto":
        return configured
    try:
        return detect_format(uri)
    except ValueError:
        fs, path = fsspec.core.url_to_fs(uri, **options)
        if fs.isdir(path):
            return "hf"
        raise


def _known_extension(path: str, plain_text: bool) -> bool:
    try:
        found = detect_format(path)
    except ValueError:
        return False
    return plain_text or found != "text"


@task(name="ingest", cache_policy=NONE)
def ingest_task(
    backends: Backends,
    task_type: TaskType,
    columns: ColumnMap,
    config: IngestConfig,
    azure: AzureStorageConfig,
    reread: bool = False,
) -> DatasetRef:
    """Read, validate and deduplicate the inputs into an accepted and a quarantine table
    (`reread`: read them again when their raw records were deleted after an approval)."""
    store, rows = backends.store, backends.settings.dask.partition_rows
    ref = run_ingest(
        backends.compute, store, task_type, columns, config, azure, rows, reread=reread
    )
    reasons = quarantine_reasons(store, ref)
    create_table_artifact(
        key="ingest-counts",
        table=[{"count": k, "records": v} for k, v in ref.counts.items()]
        + [{"count": f"quarantined: {r}", "records": n} for r, n in reasons.items()],
        description=f"Every record read, accounted for: {ref.uri}",
    )
    return ref


def raw_cipher(store: Store, config: IngestConfig) -> RawCipher | None:
    """What encrypts the raw records by `ingest.raw_retention` (None: `keep`, plain)."""
    if config.raw_retention == "keep":
        return None
    if (cipher := store.raw_cipher) is None:
        raise ValueError(
            f"ingest.raw_retention={config.raw_retention} encrypts the raw records with the "
            "store's signing key, and the store was opened without one (open it with the "
            "approval key, or set ingest.raw_retention=keep)"
        )
    return cipher


def raw_removed(store: Store, dataset: DatasetRef) -> bool:
    """Whether an ingest dataset's raw records were deleted (after an approval)."""
    return bool(store.read_manifest(dataset.uri).removed)


def retire_raw(
    store: Store, ingested: DatasetRef, config: IngestConfig, approval: ApprovalRecord
) -> bool:
    """With `ingest.raw_retention=delete-after-approval`, delete the raw records of the ingest
    dataset the approved screened data came from; its manifest says when and why. True when
    something was deleted now."""
    if config.raw_retention != "delete-after-approval" or not approval.approved:
        return False
    why = (
        f"ingest.raw_retention=delete-after-approval, screened dataset "
        f"{approval.dataset_hash[:16]} approved by {approval.reviewer}; a run that has to "
        "screen them again reads the inputs again"
    )
    removed = store.remove_tables(ingested, RAW_TABLES, why)
    if removed:
        log.info("ingest: raw records of %s deleted (%s)", ingested.uri, why)
    return removed


def last_ingest_time(store: Store) -> str | None:
    """When the newest ingest dataset in the store was made (ISO 8601, UTC), None when none."""
    times = [m.created_at for m in store.manifests() if m.stage == STAGE]
    return max(times, default=None)


def quarantine_reasons(store: Store, dataset: DatasetRef) -> dict[str, int]:
    """An ingest dataset's quarantined records per reason, most common first (its manifest's)."""
    return dict(store.read_manifest(dataset.uri).extra.get("quarantine_reasons", {}))


__all__ = [
    "FORMATS",
    "IngestConfig",
    "expand_inputs",
    "ingest_task",
    "input_format",
    "last_ingest_time",
    "quarantine_reasons",
    "raw_cipher",
    "raw_removed",
    "retire_raw",
    "run_ingest",
]
