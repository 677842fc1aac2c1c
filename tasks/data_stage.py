"""The transaction of a data stage (ingest, screen, split), written once.

A data stage's output is a dataset at a key made of its inputs and config: when a finished
dataset is already there it is reused; otherwise it is built in a scratch location (its
partitions written by Dask workers), committed with its parents' content hashes and config
hash, or aborted on any failure, so a half-written dataset is never published.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from distributed import Client

from platforms.compute import map_partitions
from platforms.manifest import DatasetRef, TableInfo
from platforms.store import DatasetWriter, Store

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Contents:
    """What a built dataset holds: the rest of its manifest."""

    content_hash: str  # order-independent hash of the main table's rows
    counts: dict[str, int]
    tables: dict[str, TableInfo]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DatasetBuild:
    """A dataset being built: where its partitions go, and the cluster that writes them."""

    client: Client
    store: Store
    writer: DatasetWriter

    def map(
        self,
        fn: Callable[..., T],
        *iterables: Sequence[Any],
        description: str,
        records: Callable[[T], int] | None = None,
        total_records: int | None = None,
        **kwargs: Any,
    ) -> list[T]:
        """`map_partitions` over the cluster (its progress counting `records` of
        `total_records`); `fn` also gets where to write (`work_uri`) and the store to write to
        (`store_uri`, `store_options`)."""
        return map_partitions(
            self.client,
            fn,
            *iterables,
            description=description,
            records=records,
            total_records=total_records,
            work_uri=self.writer.work_uri,
            store_uri=self.store.uri,
            store_options=self.store.storage_options,
            **kwargs,
        )


def stage_dataset(
    client: Client,
    store: Store,
    stage: str,
    key: str,
    *,
    task: str,
    parent_hashes: list[str],
    config_hash: str,
    build: Callable[[DatasetBuild], Contents],
) -> DatasetRef:
    """The stage's dataset at `key`: the finished one already there (`reused`), or a new one.

    `build` writes the partitions (and any side files) into the scratch location and says what
    the dataset holds; the dataset is then committed with `parent_hashes` and `config_hash`. Any
    failure, an interrupt included, removes the scratch location and is raised.
    """
    if (existing := store.find_dataset(stage, key)) is not None:
        log.info("%s: reusing %s", stage, existing.uri)
        return existing
    writer = store.begin_dataset(stage, key)
    try:
        contents = build(DatasetBuild(client, store, writer))
        return writer.commit(
            task=task,
            content_hash=contents.content_hash,
            parent_hashes=parent_hashes,
            config_hash=config_hash,
            counts=contents.counts,
            tables=contents.tables,
            extra=contents.extra,
        )
    except BaseException:
        writer.abort()
        raise
