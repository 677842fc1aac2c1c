"""screen: PII (Presidio), secrets and toxicity in every text field; act on each by its rule.

The stage around the `screening` package: each ingest partition is screened on a Dask worker
(`screening.scan.screen_records`; one analyzer per process) and written as this partition's
`screened` and `quarantine` tables, its `review` table (every flagged and every quarantined
record as the reviewer sees it, with its findings and reason) and its `changes` table (a sample
per entity type of the values replaced in kept records, before and after: `screening.changes`):
what `tasks/review.py` shows a reviewer, not part of the content hash, which covers the kept
records only; the tallies add up into `report.json` (counts per entity and rule, records kept /
redacted / quarantined / flagged, changes to kept records, masked samples). No raw value found
by the screen is ever written to the report, a log or an exception; the review shows a value
only where training keeps it (a flagged one) or the policy lets a reviewer see it
(`screen.review_shows`), and a quarantine row keeps the record's masked copy (tunegate's
placeholders in place of every finding), never its raw values. The ingest partitions it reads
may be encrypted (`ingest.raw_retention`): they are decrypted on the worker, in memory, with the
store's key, and the review and changes tables, which may show originals, are then encrypted
with it too.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from distributed import Client
from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NONE

from platforms.backends import Backends
from platforms.blob import AzureStorageConfig
from platforms.hashing import MultisetHash, combine_hashes, sha256_text, stable_json
from platforms.keys import RawCipher, key_id, secret_key
from platforms.manifest import DatasetRef, table_info
from platforms.store import MANIFEST, Store, read_table, write_table
from screening.config import ScreenConfig
from screening.profiles import ProfileName
from screening.report import (
    CHANGES_SCHEMA,
    REVIEW_SCHEMA,
    Screened,
    ScreenReport,
    change_rows,
    report_hash,
    report_markdown,
)
from screening.scan import Tally, screen_records, screen_report
from tasks.data_stage import Contents, DatasetBuild, stage_dataset
from tasks.datasheets import by_input
from tasks.ingest_files import input_index
from tasks.records import QUARANTINE_SCHEMA, TaskType, identity_hash, record_hash
from trainer.taskspec import task_spec

log = logging.getLogger(__name__)
STAGE = "screen"
SURROGATE_SALT = "surrogate-salt"  # the key's name under <store>/keys/


def screen_key(
    parent: DatasetRef, config: ScreenConfig, salt: bytes | None = None
) -> tuple[str, str]:
    """The dataset key and config hash; surrogates depend on the salt too (named by its id)."""
    config_hash = sha256_text(stable_json(config.model_dump(mode="json")))
    parts = [STAGE, parent.content_hash, config_hash]
    if salt is not None:
        parts.append(key_id(salt))
    return combine_hashes(parts), config_hash


def surrogate_salt(store: Store, config: ScreenConfig) -> bytes | None:
    """The salt keying surrogate values, or None when no rule asks for surrogates."""
    if not config.uses_surrogates:
        return None
    return secret_key(store, SURROGATE_SALT, config.surrogate_salt_env)


def screened_before(store: Store, ingested: DatasetRef, config: ScreenConfig) -> bool:
    """Whether this screen of `ingested` is already on the store (it would be reused, and the
    ingest dataset's raw records are not needed)."""
    key, _ = screen_key(ingested, config, surrogate_salt(store, config))
    return store.exists(f"{store.dataset_uri(STAGE, key)}/{MANIFEST}")


def partition_profiles(
    parts: list[str], inputs: list[str], config: ScreenConfig, azure: AzureStorageConfig
) -> tuple[list[ProfileName], dict[str, ProfileName]]:
    """The profile each ingest partition is screened with (its input's, by `screen.profiles`,
    else the run's), and the inputs whose profile is not the run's."""
    if not config.profiles:
        return [config.profile] * len(parts), {}
    for spec, name in config.profiles.items():
        if not any(by_input({spec: name}, azure)(uri) for uri in inputs):
            # a run of the nightly inbox reads some of the inputs a config names: said, not
            # refused; the review lists the inputs each profile screened
            log.warning(
                "screen.profiles names %r, which is none of the %d files this run reads: "
                "its profile (%s) screens nothing here",
                spec,
                len(inputs),
                name,
            )
    profile_of = by_input(config.profiles, azure)
    others = {uri: p for uri in inputs if (p := profile_of(uri)) not in (None, config.profile)}

    def input_of(part: str) -> str | None:
        index = input_index(part)
        return inputs[index] if index is not None and index < len(inputs) else None

    return [others.get(input_of(part) or "", config.profile) for part in parts], others


def run_screen(
    client: Client,
    store: Store,
    ingested: DatasetRef,
    config: ScreenConfig,
    azure: AzureStorageConfig | None = None,
) -> Screened:
    """Screen the accepted table of an ingest dataset (or reuse an earlier identical screen);
    `azure` reaches the inputs `screen.profiles` names on Blob."""
    salt = surrogate_salt(store, config)
    key, config_hash = screen_key(ingested, config, salt)
    task_type = TaskType(ingested.task)

    def build(dataset: DatasetBuild) -> Contents:
        parts = store.table_files(ingested, "accepted")
        # The review and changes tables may show a replaced value's original (screen.review_shows):
        # raw values, kept at rest as the ingest keeps its raw records (encrypted unless `keep`).
        raw_extra = store.read_manifest(ingested.uri).extra
        originals_cipher = store.raw_cipher if "encrypted_with_key" in raw_extra else None
        profiles, input_profiles = partition_profiles(
            parts, raw_extra.get("inputs", []), config, azure or AzureStorageConfig()
        )
        results = dataset.map(
            screen_partition,
            parts,
            list(range(len(parts))),
            profiles,
            description="screen",
            records=lambda r: r.tally.records_in,
            total_records=ingested.counts.get("accepted"),
            task_type=task_type,
            config=config,
            salt=salt,
            cipher=store.raw_cipher,
            originals_cipher=originals_cipher,
        )
        report = screen_report(task_type, [r.tally for r in results], config, input_profiles)
        dataset.writer.write_json("report.json", report.model_dump(mode="json"))
        content = MultisetHash()
        for r in results:
            content.merge(MultisetHash(r.content))
        return Contents(
            content_hash=content.hexdigest(),
            counts={
                "read": report.records_in,
                "accepted": report.kept,
                "redacted": report.redacted,
                "quarantined": report.quarantined,
                "flagged": report.flagged,
            },
            tables={
                "screened": table_info(
                    report.kept,
                    [f for r in results for f in r.screened_files],
                    task_spec(task_type).record_schema,
                ),
                "quarantine": table_info(
                    report.quarantined,
                    [f for r in results for f in r.quarantine_files],
                    QUARANTINE_SCHEMA,
                ),
                "review": table_info(
                    sum(r.reviewed for r in results),
                    [f for r in results for f in r.review_files],
                    REVIEW_SCHEMA,
                ),
                "changes": table_info(
                    sum(r.changes for r in results),
                    [f for r in results for f in r.change_files],
                    CHANGES_SCHEMA,
                ),
            },
            extra={"report_hash": report_hash(report)},
        )

    ref = stage_dataset(
        client,
        store,
        STAGE,
        key,
        task=task_type.value,
        parent_hashes=[ingested.content_hash],
        config_hash=config_hash,
        build=build,
    )
    screened = Screened(ref, load_report(store, ref))
    if not ref.reused:
        report = screened.report
        log.info(
            "screen: kept=%d redacted=%d quarantined=%d flagged=%d",
            report.kept,
            report.redacted,
            report.quarantined,
            report.flagged,
        )
    return screened


def load_report(store: Store, screened: DatasetRef) -> ScreenReport:
    return ScreenReport.model_validate_json(store.read_text(f"{screened.uri}/report.json"))


@dataclass(frozen=True, slots=True)
class PartitionScreened:
    """What `screen_partition` did with one partition, handed back to the stage."""

    tally: Tally  # what screening counted, for the report
    content: int  # `MultisetHash.value` of the kept records' `identity_hash` (content and id)
    screened_files: tuple[str, ...]  # screened table files, relative to the dataset
    quarantine_files: tuple[str, ...]  # quarantine table files, relative to the dataset
    review_files: tuple[str, ...] = ()  # review table files (flagged and quarantined, masked)
    reviewed: int = 0  # rows in this partition's review table
    change_files: tuple[str, ...] = ()  # changes table files (a sample of kept records' changes)
    changes: int = 0  # rows in this partition's changes table


def screen_partition(
    part_uri: str,
    index: int,
    profile: ProfileName | None = None,
    *,
    work_uri: str,
    store_uri: str,
    store_options: dict[str, Any],
    task_type: TaskType,
    config: ScreenConfig,
    salt: bytes | None = None,
    cipher: RawCipher | None = None,
    originals_cipher: RawCipher | None = None,
) -> PartitionScreened:
    """Screen one partition on a worker (decrypted with `cipher` when encrypted); write its
    tables (the review and changes tables, which may hold originals, encrypted with
    `originals_cipher` when given); return its tally and files. `profile`: its input's
    screening profile, when not the run's (`screen.profiles`)."""
    store = Store(store_uri, store_options)
    config = config.for_profile(profile or config.profile)
    screening = screen_records(task_type, read_table(store, part_uri, cipher), config, salt)
    content = MultisetHash()
    for record in screening.kept:
        content.add(identity_hash(record_hash(record), record["id"]))
    quarantine = [
        {
            "source": part_uri,
            "line": None,
            "id": q.id,
            "stage": STAGE,
            "reason": q.reason,
            "raw": json.dumps(q.record, ensure_ascii=False),
        }
        for q in screening.quarantined
    ]
    schema = task_spec(task_type).record_schema
    return PartitionScreened(
        tally=screening.tally,
        content=content.value,
        screened_files=_write_part(store, work_uri, "screened", index, screening.kept, schema),
        quarantine_files=_write_part(
            store, work_uri, "quarantine", index, quarantine, QUARANTINE_SCHEMA
        ),
        review_files=_write_part(
            store,
            work_uri,
            "review",
            index,
            [r.to_row() for r in screening.review],
            REVIEW_SCHEMA,
            originals_cipher,
        ),
        reviewed=len(screening.review),
        change_files=_write_part(
            store,
            work_uri,
            "changes",
            index,
            change_rows(screening.changes),
            CHANGES_SCHEMA,
            originals_cipher,
        ),
        changes=len(screening.changes),
    )


def _write_part(
    store: Store,
    work_uri: str,
    table: str,
    index: int,
    rows: list[dict[str, Any]],
    schema: pa.Schema,
    cipher: RawCipher | None = None,
) -> tuple[str, ...]:
    """Write `rows` as this partition's file of `table` (encrypted with `cipher` when given);
    its name, or none without rows."""
    if not rows:
        return ()
    name = f"{table}/part-{index:05d}.parquet"
    write_table(store, f"{work_uri}/{name}", rows, schema, cipher)
    return (name,)


@task(name="screen", cache_policy=NONE)
def screen_task(
    backends: Backends,
    ingested: DatasetRef,
    config: ScreenConfig,
    azure: AzureStorageConfig | None = None,
) -> Screened:
    """Screen for PII, secrets and toxicity; publish the report as Prefect artifacts."""
    screened = run_screen(backends.compute, backends.store, ingested, config, azure)
    report = screened.report
    create_table_artifact(
        key="screening-counts",
        table=[c.model_dump() for c in report.entities] or [{"entity": "none", "findings": 0}],
        description="Findings per entity type and rule",
    )
    create_markdown_artifact(key="screening-report", markdown=report_markdown(report))
    return screened
