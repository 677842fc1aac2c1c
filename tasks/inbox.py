"""New files in the inbox: what the nightly run reads (`ingest.inputs` of its request: a folder,
a glob, or a Blob container), found by content hash, so that a file dropped once starts one
retrain run and the same file dropped again (or renamed) starts none.

The hashes already announced are kept in the store (`inbox/seen.json`, by content hash: the
file's URI and when it was first seen). `watch-inbox` (flows/inbox.py) announces the new ones as
a `tunegate.data.arrived` event that the retrain deployment's trigger turns into a run.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import fsspec
from pydantic import BaseModel, ConfigDict, Field

from platforms.blob import AzureStorageConfig, storage_options
from platforms.store import Store
from tasks.ingest_inputs import expand_inputs

SEEN = "inbox/seen.json"


class Arrival(BaseModel):
    """One new input file: where it is and what it holds."""

    model_config = ConfigDict(frozen=True)
    uri: str
    sha256: str
    bytes: int = Field(ge=0)


def file_sha256(uri: str, azure: AzureStorageConfig) -> tuple[str, int]:
    """The file's sha256 and size, read in 1 MiB blocks (local or az://)."""
    digest, size = hashlib.sha256(), 0
    with fsspec.open(uri, "rb", **storage_options(uri, azure)) as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def new_arrivals(
    store: Store, inputs: list[str], azure: AzureStorageConfig, task: str
) -> list[Arrival]:
    """The input files whose content the store has not seen announced; they are recorded as seen
    now (a file whose content is already recorded, under any name, is not new)."""
    files = expand_inputs(inputs, azure, task, allow_empty=True) if inputs else []
    seen = _read_seen(store)
    found: list[Arrival] = []
    for uri in files:
        sha, size = file_sha256(uri, azure)
        if sha in seen or any(a.sha256 == sha for a in found):
            continue
        found.append(Arrival(uri=uri, sha256=sha, bytes=size))
    if found:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        seen.update({a.sha256: {"uri": a.uri, "seen": now} for a in found})
        store.write_text_atomic(store.path(*SEEN.split("/")), json.dumps(seen, indent=2))
    return found


def _read_seen(store: Store) -> dict[str, Any]:
    uri = store.path(*SEEN.split("/"))
    if not store.exists(uri):
        return {}
    return json.loads(store.read_text(uri))
