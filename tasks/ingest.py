"""ingest: read JSONL / CSV / Parquet with Dask, validate, deduplicate, quarantine with reasons.

Nothing is lost: every non-blank line read ends up accepted, quarantined (with a reason) or
counted as a duplicate of an earlier record, and `read = accepted + quarantined + duplicates`
is checked before the dataset is published.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import fsspec
from distributed import Client
from prefect import task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field

from platforms.blob import AzureStorageConfig, storage_options
from platforms.compute import DaskConfig, lazy_client, map_partitions
from platforms.store import (
    DatasetRef,
    MultisetHash,
    Store,
    combine_hashes,
    sha256_text,
    stable_json,
    table_info,
    write_table,
)
from tasks.readers import FORMATS, detect_format, read_lines
from tasks.records import (
    QUARANTINE_SCHEMA,
    RECORD_SCHEMAS,
    ColumnMap,
    Invalid,
    TaskType,
    record_hash,
    validate_record,
)

log = logging.getLogger(__name__)
STAGE = "ingest"


class IngestConfig(BaseModel):
    """Which files to read and how."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    inputs: list[str] = Field(
        default_factory=list,
        description="Files, directories or globs; local paths or az://container/path. "
        "Empty: `tunegate run` generates sample data.",
    )
    format: Literal["auto", "jsonl", "csv", "parquet"] = Field(
        "auto", description="Input format; auto picks it from each file's extension."
    )


@dataclass
class _FileResult:
    """What one input file produced, kept on the worker until deduplication decides."""

    source: str
    accepted: list[dict[str, Any]] = field(default_factory=list)
    keys: list[tuple[str, str, int]] = field(default_factory=list)  # (hash, id, line)
    quarantine: list[dict[str, Any]] = field(default_factory=list)
    read: int = 0
    blank: int = 0


def expand_inputs(inputs: list[str], azure: AzureStorageConfig) -> list[str]:
    """Every file the inputs name, sorted; a ValueError names an input that matches nothing."""
    if not inputs:
        raise ValueError("ingest.inputs is empty: give at least one file, directory or glob")
    files: list[str] = []
    for spec in inputs:
        fs, path = fsspec.core.url_to_fs(spec, **storage_options(spec, azure))
        protocol = spec.split("://", 1)[0] + "://" if "://" in spec else ""
        if any(ch in path for ch in "*?["):
            found = sorted(fs.glob(path))
        elif fs.isdir(path):
            found = sorted(p for p in fs.find(path) if _known_extension(p))
        elif fs.exists(path):
            found = [path]
        else:
            found = []
        if not found:
            raise ValueError(f"ingest.inputs: nothing matches {spec!r}")
        files.extend(protocol + p if protocol else p for p in found)
    return sorted(dict.fromkeys(files))


def fingerprint(uri: str, azure: AzureStorageConfig) -> str:
    """A file's identity for the cache key: its content hash locally, its ETag on Blob."""
    options = storage_options(uri, azure)
    fs, path = fsspec.core.url_to_fs(uri, **options)
    if options:
        info = fs.info(path)
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
) -> DatasetRef:
    """Ingest the configured inputs into `{store}/datasets/ingest/{key}` (or reuse it)."""
    files = expand_inputs(config.inputs, azure)
    fingerprints = [fingerprint(f, azure) for f in files]
    key, config_hash = ingest_key(task_type, columns, config, files, fingerprints, partition_rows)
    if (existing := store.find_dataset(STAGE, key)) is not None:
        log.info("ingest: reusing %s", existing.uri)
        return existing
    jobs = [
        (i, uri, config.format if config.format != "auto" else detect_format(uri))
        for i, uri in enumerate(files)
    ]
    options = [storage_options(uri, azure) for uri in files]
    results = client.map(
        _read_file,
        [j[1] for j in jobs],
        [j[2] for j in jobs],
        options,
        task=task_type,
        columns=columns,
        pure=False,
    )
    keys = client.gather(client.map(lambda r: (r.keys, r.read, r.blank), results, pure=False))
    drops = _decide_duplicates([k[0] for k in keys], files)

    writer = store.begin_dataset(STAGE, key)
    try:
        written = map_partitions(
            client,
            _write_file,
            results,
            drops,
            list(range(len(files))),
            description="ingest: write",
            work_uri=writer.work_uri,
            store_uri=store.uri,
            store_options=store.storage_options,
            task_type=task_type,
            partition_rows=partition_rows,
        )
        counts = Counter({"files": len(files)})
        reasons: Counter[str] = Counter()
        content = MultisetHash()
        accepted_files: list[str] = []
        quarantine_files: list[str] = []
        for (read_count, blank_count), out in zip(
            ((k[1], k[2]) for k in keys), written, strict=True
        ):
            counts.update({"read": read_count, "blank": blank_count, **out["counts"]})
            reasons.update(out["reasons"])
            content.merge(MultisetHash(out["content"]))
            accepted_files += out["accepted_files"]
            quarantine_files += out["quarantine_files"]
        for name in ("accepted", "quarantined", "duplicates"):
            counts.setdefault(name, 0)
        if counts["read"] != counts["accepted"] + counts["quarantined"] + counts["duplicates"]:
            raise RuntimeError(f"ingest lost records: {dict(counts)}")  # a bug, never data
        ref = writer.commit(
            task=task_type.value,
            content_hash=content.hexdigest(),
            parent_hashes=fingerprints,
            config_hash=config_hash,
            counts=dict(counts),
            tables={
                "accepted": table_info(
                    counts["accepted"], accepted_files, RECORD_SCHEMAS[task_type]
                ),
                "quarantine": table_info(
                    counts["quarantined"], quarantine_files, QUARANTINE_SCHEMA
                ),
            },
            extra={"inputs": files, "quarantine_reasons": dict(reasons.most_common())},
        )
    except BaseException:
        writer.abort()
        raise
    finally:
        client.cancel(results)
    log.info("ingest: %s", _summary(ref.counts))
    return ref


def _summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in counts.items())


def _read_file(
    uri: str, fmt: str, options: dict[str, Any], *, task: TaskType, columns: ColumnMap
) -> _FileResult:
    result = _FileResult(source=uri)
    for line in read_lines(uri, fmt, columns, options):
        if line.blank:
            result.blank += 1
            continue
        result.read += 1
        if line.error is not None:
            result.quarantine.append(_quarantine_row(uri, line.number, None, line.error, line.raw))
            continue
        try:
            record = validate_record(task, columns, line.obj)
        except Invalid as exc:
            result.quarantine.append(
                _quarantine_row(uri, line.number, _raw_id(line.obj, columns), str(exc), line.raw)
            )
            continue
        result.accepted.append(record)
        result.keys.append((record_hash(record), record["id"], line.number))
    return result


def _decide_duplicates(
    keys_per_file: list[list[tuple[str, str, int]]], files: list[str]
) -> list[dict[int, str]]:
    """For every file, the accepted rows to drop: {row index: 'duplicate' or a quarantine reason}.

    The first occurrence in (file, line) order is kept. A later record with the same content is a
    duplicate; a later record with a known id but other content is quarantined, so ids stay unique.
    """
    seen_hash: set[str] = set()
    first_id: dict[str, str] = {}
    drops: list[dict[int, str]] = []
    for file_index, keys in enumerate(keys_per_file):
        file_drops: dict[int, str] = {}
        for row, (content, record_id, line) in enumerate(keys):
            if content in seen_hash:
                file_drops[row] = "duplicate"
            elif record_id in first_id:
                file_drops[row] = (
                    f"duplicate id {record_id!r} with other content (first at {first_id[record_id]})"
                )
            else:
                seen_hash.add(content)
                first_id[record_id] = f"{files[file_index]}:{line}"
        drops.append(file_drops)
    return drops


def _write_file(
    result: _FileResult,
    drops: dict[int, str],
    file_index: int,
    *,
    work_uri: str,
    store_uri: str,
    store_options: dict[str, Any],
    task_type: TaskType,
    partition_rows: int,
) -> dict[str, Any]:
    store = Store(store_uri, store_options)
    keep: list[dict[str, Any]] = []
    quarantine = list(result.quarantine)
    duplicates = 0
    content = MultisetHash()
    for row, record in enumerate(result.accepted):
        verdict = drops.get(row)
        if verdict == "duplicate":
            duplicates += 1
        elif verdict is not None:
            quarantine.append(
                _quarantine_row(result.source, result.keys[row][2], record["id"], verdict, "")
            )
        else:
            keep.append(record)
            content.add(result.keys[row][0])
    accepted_files, quarantine_files = [], []
    for k in range(0, len(keep), partition_rows):
        name = f"accepted/part-{file_index:05d}-{k // partition_rows:05d}.parquet"
        write_table(
            store, f"{work_uri}/{name}", keep[k : k + partition_rows], RECORD_SCHEMAS[task_type]
        )
        accepted_files.append(name)
    if quarantine:
        name = f"quarantine/part-{file_index:05d}.parquet"
        write_table(store, f"{work_uri}/{name}", quarantine, QUARANTINE_SCHEMA)
        quarantine_files.append(name)
    return {
        "counts": {"accepted": len(keep), "quarantined": len(quarantine), "duplicates": duplicates},
        "reasons": Counter(_reason_kind(q["reason"]) for q in quarantine),
        "content": content.value,
        "accepted_files": accepted_files,
        "quarantine_files": quarantine_files,
    }


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


def _reason_kind(reason: str) -> str:
    """Group reasons that differ only in numbers or ids, for the counts table."""
    return re.sub(
        r"'[^']*' with other content \(first at [^)]*\)",
        "with other content",
        re.sub(r"(?<![\w-])\d+", "N", reason),
    )


def _known_extension(path: str) -> bool:
    try:
        detect_format(path)
    except ValueError:
        return False
    return True


@task(name="ingest", cache_policy=NONE)
def ingest_task(
    store: Store,
    dask: DaskConfig,
    task_type: TaskType,
    columns: ColumnMap,
    config: IngestConfig,
    azure: AzureStorageConfig,
) -> DatasetRef:
    """Read, validate and deduplicate the inputs into an accepted and a quarantine table."""
    ref = run_ingest(
        lazy_client(dask), store, task_type, columns, config, azure, dask.partition_rows
    )
    reasons = store.read_manifest(ref.uri).extra.get("quarantine_reasons", {})
    create_table_artifact(
        key="ingest-counts",
        table=[{"count": k, "records": v} for k, v in ref.counts.items()]
        + [{"count": f"quarantined: {r}", "records": n} for r, n in reasons.items()],
        description=f"Every record read, accounted for: {ref.uri}",
    )
    return ref


__all__ = ["FORMATS", "IngestConfig", "ingest_task", "run_ingest"]
