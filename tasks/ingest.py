"""ingest: read the inputs with Dask, validate, deduplicate, quarantine with reasons.

Inputs are JSON lines, CSV, Parquet, SQuAD JSON, Arrow files and Hugging Face `datasets` folders
(tasks/readers.py). Nothing is lost: every non-blank line (row, SQuAD question) read ends up
accepted, quarantined (with a reason) or counted as a duplicate of an earlier record, and
`read = accepted + quarantined + duplicates` is checked before the dataset is published.

Its tables hold the raw records, with the personal data and credentials the screen removes later:
by `ingest.raw_retention` they are encrypted at rest with a key derived from the store's signing
key (`encrypt`, the default), encrypted and deleted once the screened data is approved
(`delete-after-approval`, `retire_raw`), or kept plain (`keep`).

Which inputs and in which format: tasks/ingest_inputs.py; each file read and written on the
cluster: tasks/ingest_files.py; duplicates across files and the totals: tasks/ingest_totals.py.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from distributed import Client, Future
from prefect import task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field, model_validator

from platforms.approvals import ApprovalRecord
from platforms.backends import Backends
from platforms.blob import AzureStorageConfig, storage_options
from platforms.datasheet import Datasheet
from platforms.erasures import erased_ids
from platforms.hashing import combine_hashes, sha256_text, stable_json
from platforms.keys import RawCipher
from platforms.manifest import DatasetRef
from platforms.store import Store
from tasks.data_stage import Contents, DatasetBuild, stage_dataset
from tasks.ingest_files import (
    STAGE,
    Drops,
    FileRead,
    FileTally,
    FileWritten,
    RowKey,
    Spill,
    id_digest,
    read_file,
    write_file,
)
from tasks.ingest_inputs import expand_inputs, fingerprint, input_format
from tasks.ingest_totals import add_up, decide_duplicates, ingest_contents, shared_rows
from tasks.readers import FORMATS
from tasks.records import ColumnMap, TaskType

log = logging.getLogger(__name__)
RAW_TABLES = ["accepted", "quarantine"]  # an ingest dataset's tables: both hold raw records
RawRetention = Literal["encrypt", "delete-after-approval", "keep"]


class IngestConfig(BaseModel):
    """Which files to read and how."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    inputs: list[str] = Field(
        default_factory=list,
        description="Files, directories or globs; local paths or az://container/path. "
        "Empty: `tunegate run` generates sample data. An entry may be a mapping: its `path`, "
        "its datasheet (source, licence, owner, basis), kept in `datasheets`, and its "
        "screening `profile`, kept in `screen.profiles`.",
    )
    datasheets: dict[str, Datasheet] = Field(
        default_factory=dict,
        description="Datasheets by input as given in `inputs` (a file, a folder, a glob): "
        "source, licence (an SPDX id), owner, basis. They win over a sidecar file "
        "(`<file>.datasheet.yaml`) and a datasets folder's README.md card, field by field.",
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
    owner: str | None = Field(
        None,
        description="Who owns (authored) the data these inputs hold, as an e-mail of the "
        "reviewers file: they may not approve it (their approval does not count).",
    )

    def owners(self) -> list[str]:
        """Who owns the data of these inputs (the approve stage's `owners`)."""
        return [self.owner] if self.owner else []

    @model_validator(mode="before")
    @classmethod
    def _entries_with_datasheets(cls, data: Any) -> Any:
        """`inputs` entries given as mappings (`{path: ..., licence: ...}`): the path stays in
        `inputs`, the rest is the input's datasheet."""
        if not isinstance(data, dict) or not isinstance(data.get("inputs"), list):
            return data
        inputs, sheets = [], dict(data.get("datasheets") or {})
        for i, entry in enumerate(data["inputs"]):
            if not isinstance(entry, dict):
                inputs.append(entry)
                continue
            fields = dict(entry)
            path = fields.pop("path", None)
            if not isinstance(path, str) or not path:
                raise ValueError(
                    f"inputs.{i}: an input given as a mapping needs its `path` (and may give "
                    "source, licence, owner, basis)"
                )
            inputs.append(path)
            sheets[path] = fields
        return {**data, "inputs": inputs, "datasheets": sheets}


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
            erased = frozenset(erased_ids(store))
            tallies = _tallies(client, reads, erased)
            drops = decide_duplicates(_shared_keys(client, reads, tallies), files, erased)
            written = _write_files(dataset, reads, drops, task_type, partition_rows, cipher)
        finally:
            client.cancel(reads)
        pending = f"{dataset.writer.work_uri}/pending"  # emptied chunk by chunk by write_file
        if store.exists(pending):
            store.remove(pending, recursive=True)
        contents = ingest_contents(task_type, add_up(files, tallies, written, task_type), files)
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


def _tallies(client: Client, reads: list[Future], erased: frozenset[str]) -> list[FileTally]:
    """Every file's counts and key prefixes (16 bytes a row), rows with an erased id left out."""
    digests = frozenset(id_digest(i) for i in erased)
    return client.gather(client.map(FileRead.tally, reads, erased=digests, pure=False))


def _shared_keys(
    client: Client, reads: list[Future], tallies: list[FileTally]
) -> list[list[tuple[int, RowKey]]]:
    """The full keys of the rows whose content or id may occur twice, fetched from the workers
    that hold them: never every row's."""
    rows = shared_rows(tallies)
    wanted = [(read, r) for read, r in zip(reads, rows, strict=True) if r]
    fetched = iter(client.gather([client.submit(FileRead.keys_at, f, r) for f, r in wanted]))
    return [list(zip(r, next(fetched), strict=True)) if r else [] for r in rows]


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


def _summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in counts.items())


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
    "ingest_task",
    "last_ingest_time",
    "quarantine_reasons",
    "raw_cipher",
    "raw_removed",
    "retire_raw",
    "run_ingest",
]
