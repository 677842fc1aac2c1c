"""split: train / validation / test by a stable hash of a group key.

A record's split depends only on its group value (the QA context, the summarization document)
and a salt, so a group never straddles two splits, the same data always splits the same way, and
adding new records never moves old ones.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import numpy as np
from distributed import Client
from prefect import task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NONE
from pydantic import BaseModel, ConfigDict, Field, model_validator

from platforms.backends import Backends
from platforms.erasures import erased_ids
from platforms.hashing import MultisetHash, combine_hashes, sha256_text, stable_json
from platforms.manifest import DatasetRef, table_info
from platforms.store import Store, read_table, write_table
from tasks.data_stage import Contents, DatasetBuild, stage_dataset
from tasks.records import TaskType, record_hash
from trainer.taskspec import task_spec

log = logging.getLogger(__name__)
STAGE = "split"
GROUP_HASH = np.dtype([("high", "<u8"), ("low", "<u8")])  # a group value's 16-byte blake2b
SPLITS = ("train", "validation", "test")


class SplitConfig(BaseModel):
    """How approved records are divided for training and evaluation."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    train: float = Field(
        0.8,
        gt=0.0,
        le=1.0,
        description="Share of groups for training; not given beside validation or test, it "
        "takes the rest (split.test=0.3 alone: train 0.6).",
    )
    validation: float = Field(0.1, ge=0.0, lt=1.0, description="Share of groups for validation.")
    test: float = Field(0.1, ge=0.0, lt=1.0, description="Share of groups for the test set.")
    group_key: str | None = Field(
        None,
        description="Canonical field whose value keeps records together (default: context for "
        "extractive-qa, document for summarization, id for chat and text-generation).",
    )
    salt: str = Field("tunegate", description="Change to draw a different, still stable, split.")

    @model_validator(mode="before")
    @classmethod
    def _train_takes_the_rest(cls, data: Any) -> Any:
        """`train` not given beside a `validation` or `test` share: it takes the rest
        (`split.test=0.3` alone: train 0.6, validation 0.1, test 0.3)."""
        if not isinstance(data, dict) or "train" in data or not {"validation", "test"} & set(data):
            return data
        fields = cls.model_fields
        with suppress(TypeError, ValueError):
            validation = float(data.get("validation", fields["validation"].default))
            test = float(data.get("test", fields["test"].default))
            if validation + test < 1.0:  # else nothing is left: the sum's error says so
                return {**data, "train": round(1.0 - validation - test, 10)}
        return data

    @model_validator(mode="after")
    def _ratios_sum_to_one(self) -> SplitConfig:
        total = self.train + self.validation + self.test
        if abs(total - 1.0) > 1e-6:
            rest = round(1.0 - self.validation - self.test, 10)
            fix = (
                f"set split.train={rest:g} (the rest), or change split.validation / split.test"
                if rest > 0
                else f"split.validation + split.test ({self.validation + self.test:g}) leave "
                "nothing for split.train: lower them"
            )
            raise ValueError(
                f"split.train + split.validation + split.test must sum to 1.0, got {total:g}: "
                + fix
            )
        return self

    def group_field(self, task_type: TaskType) -> str:
        return self.group_key or task_spec(task_type).default_group_key


def assign_split(group_value: str, config: SplitConfig) -> str:
    """The split of a group: a uniform number from its hash, cut at the cumulative ratios."""
    digest = hashlib.sha256(f"{config.salt}\0{group_value}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    if u < config.train:
        return "train"
    if u < config.train + config.validation:
        return "validation"
    return "test"


def run_split(
    client: Client,
    store: Store,
    screened: DatasetRef,
    config: SplitConfig,
    exclude_ids: list[str],
) -> DatasetRef:
    """Split the screened table, leaving out the records a reviewer excluded and every record
    ever erased from the store (platforms/erasures.py: an input read again may still hold it)."""
    task_type = TaskType(screened.task)
    excluded = sorted(set(exclude_ids) | erased_ids(store))
    config_hash = sha256_text(stable_json(config.model_dump(mode="json")))
    key = combine_hashes(
        [STAGE, screened.content_hash, config_hash, sha256_text(stable_json(excluded))]
    )

    def build(dataset: DatasetBuild) -> Contents:
        parts = store.table_files(screened, "screened")
        results = dataset.map(
            _split_partition,
            parts,
            list(range(len(parts))),
            description="split",
            task_type=task_type,
            config=config,
            excluded=frozenset(excluded),
        )
        counts: Counter[str] = Counter()
        content = MultisetHash()
        files: dict[str, list[str]] = {s: [] for s in SPLITS}
        excluded_found: set[str] = set()
        for r in results:
            content.merge(MultisetHash(r.content))
            excluded_found.update(r.excluded)
            for s, shard in r.shards.items():
                counts[s] += shard.records
                files[s] += shard.files
        groups = {s: distinct_groups([r.shards[s].groups for r in results]) for s in SPLITS}
        schema = task_spec(task_type).record_schema
        return Contents(
            content_hash=content.hexdigest(),
            counts={**{s: counts[s] for s in SPLITS}, "excluded": len(excluded_found)},
            tables={s: table_info(counts[s], files[s], schema) for s in SPLITS},
            extra={
                "ratios": {s: getattr(config, s) for s in SPLITS},
                "group_field": config.group_field(task_type),
                "groups": groups,
                "excluded_ids": sorted(excluded_found),
                "excluded_ids_not_found": sorted(set(excluded) - excluded_found),
            },
        )

    ref = stage_dataset(
        client,
        store,
        STAGE,
        key,
        task=task_type.value,
        parent_hashes=[screened.content_hash],
        config_hash=config_hash,
        build=build,
    )
    if not ref.reused:
        log.info("split: %s", ", ".join(f"{s}={ref.counts[s]}" for s in SPLITS))
    return ref


@dataclass(frozen=True, slots=True)
class SplitShard:
    """One split's share of one partition."""

    records: int  # records the partition put in this split
    files: tuple[str, ...]  # this split's table files it wrote, relative to the dataset
    groups: np.ndarray  # their distinct group values' 16-byte hashes (GROUP_HASH rows)


@dataclass(frozen=True, slots=True)
class PartitionSplit:
    """What `_split_partition` did with one partition, handed back to the stage."""

    shards: dict[str, SplitShard]  # split name (train, validation, test) -> its share
    content: int  # `MultisetHash.value` of every (split, record) kept
    excluded: tuple[str, ...]  # ids of the records left out as the reviewer asked


def _split_partition(
    part_uri: str,
    index: int,
    *,
    work_uri: str,
    store_uri: str,
    store_options: dict[str, Any],
    task_type: TaskType,
    config: SplitConfig,
    excluded: frozenset[str],
) -> PartitionSplit:
    """Assign every record of one partition to its split on a worker and write the splits."""
    store = Store(store_uri, store_options)
    field = config.group_field(task_type)
    rows: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}
    groups: dict[str, set[bytes]] = {s: set() for s in SPLITS}
    content = MultisetHash()
    found = []
    for record in read_table(store, part_uri):
        if record["id"] in excluded:
            found.append(record["id"])
            continue
        group = _group_value(record, field)
        split = assign_split(group, config)  # split_counts below draws the same way
        rows[split].append(record)
        groups[split].add(hashlib.blake2b(group.encode(), digest_size=16).digest())
        content.add(sha256_text(split + record_hash(record) + record["id"]))
    shards = {}
    for s in SPLITS:
        files: tuple[str, ...] = ()
        if rows[s]:
            name = f"{s}/part-{index:05d}.parquet"
            write_table(store, f"{work_uri}/{name}", rows[s], task_spec(task_type).record_schema)
            files = (name,)
        hashes = np.frombuffer(b"".join(groups[s]), dtype=GROUP_HASH)
        shards[s] = SplitShard(records=len(rows[s]), files=files, groups=hashes)
    return PartitionSplit(shards=shards, content=content.value, excluded=tuple(found))


def distinct_groups(parts: list[np.ndarray]) -> int:
    """How many distinct groups the partitions' group hashes hold together: a group may have
    records in several partitions. 16 bytes a group, never the values."""
    return len(np.unique(np.concatenate(parts))) if parts else 0


def split_counts(store: Store, screened: DatasetRef, config: SplitConfig) -> dict[str, int]:
    """How many records of the screened table each split would hold, before any reviewer left
    some out: the split's own draw (`assign_split` of each group), counted without writing.
    Exclusions only lower these, so a test split too small here is too small after approval."""
    field = config.group_field(TaskType(screened.task))
    counts: Counter[str] = Counter()
    for part_uri in store.table_files(screened, "screened"):
        for record in read_table(store, part_uri):
            counts[assign_split(_group_value(record, field), config)] += 1
    return {s: counts[s] for s in SPLITS}


def _group_value(record: dict[str, Any], field: str) -> str:
    if field not in record:
        raise ValueError(
            f"split.group_key {field!r} is not a field of these records: {sorted(record)}"
        )
    value = record[field]
    return value if isinstance(value, str) else stable_json(value)


@task(name="split", cache_policy=NONE)
def split_task(
    backends: Backends, screened: DatasetRef, config: SplitConfig, exclude_ids: list[str]
) -> DatasetRef:
    """Divide approved records into train, validation and test without leakage."""
    store = backends.store
    ref = run_split(backends.compute, store, screened, config, exclude_ids)
    groups = store.read_manifest(ref.uri).extra["groups"]
    create_table_artifact(
        key="split-counts",
        table=[{"split": s, "records": ref.counts[s], "groups": groups[s]} for s in SPLITS],
        description=f"{ref.counts['excluded']} records excluded by the reviewer: {ref.uri}",
    )
    return ref


@task(name="count-split", cache_policy=NONE)
def count_split_task(
    backends: Backends, screened: DatasetRef, config: SplitConfig
) -> dict[str, int]:
    """Count the records each split would hold, before approval (`split_counts`)."""
    counts = split_counts(backends.store, screened, config)
    log.info("the split will hold %s", ", ".join(f"{s}={counts[s]}" for s in SPLITS))
    return counts
