"""What a finished dataset is: its manifest (signed with the approval key) and the typed
reference stages hand each other.

A dataset exists once its `manifest.json` exists (platforms/store.py writes it last); the
manifest lists every table and file with its sha256, so a file edited, truncated or deleted
afterwards is found (`DatasetCorrupt`) before a stage reads it.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from platforms.hashing import stable_json


class TableInfo(BaseModel):
    """One Parquet table of a dataset: its row count, files and column types."""

    model_config = ConfigDict(frozen=True)
    rows: int
    files: list[str]
    schema_: dict[str, str] = Field(alias="schema")


class Manifest(BaseModel):
    """What a dataset is: where it lives, what made it and what it holds (DESIGN.md contract)."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)
    uri: str
    stage: str
    task: str
    key: str = Field(description="Location hash: parents + config + stage.")
    content_hash: str = Field(description="Hash of the main table's rows, order-independent.")
    parent_hashes: list[str]
    config_hash: str
    created_at: str
    counts: dict[str, int]
    tables: dict[str, TableInfo]
    extra: dict[str, Any] = Field(default_factory=dict)
    files: dict[str, str] = Field(
        default_factory=dict,
        description="sha256 of every file written with the dataset, by path relative to it "
        "(empty in datasets written before tunegate recorded them: those are not verified).",
    )
    removed: dict[str, str] = Field(
        default_factory=dict,
        description="Tables whose files were deleted on purpose (the raw records of an ingest "
        "dataset once its screened data was approved), each with when and why; their files "
        "are no longer in `files`.",
    )
    signature: str = Field(
        "",
        description="HMAC-SHA256 of everything above but `uri` with the key that signs approval "
        "records (outside the store): a file re-hashed into the manifest breaks it.",
    )

    def signed_content(self) -> bytes:
        """What the signature covers: the manifest without its location (`uri` is where it was
        read from: a copied or moved store verifies itself) and without the signature (nor
        `removed` while empty, so manifests signed before it existed still verify)."""
        exclude = {"uri", "signature"} | (set() if self.removed else {"removed"})
        content = self.model_dump(mode="json", by_alias=True, exclude=exclude)
        return stable_json(content).encode("utf-8")

    def signed(self, key: bytes) -> Manifest:
        digest = hmac.new(key, self.signed_content(), hashlib.sha256).hexdigest()
        return self.model_copy(update={"signature": digest})

    def signature_problem(self, key: bytes) -> str | None:
        """Why the manifest's signature does not hold, or None when it does."""
        if not self.signature:
            return UNSIGNED
        if not hmac.compare_digest(self.signed(key).signature, self.signature):
            return "its manifest was edited or signed with another key (the signature differs)"
        return None


UNSIGNED = (
    "its manifest is not signed (written before tunegate signed manifests, or without the "
    "signing key; `tunegate store sign` signs the datasets whose files still match)"
)


class DatasetCorrupt(ValueError):
    """A finished dataset's files no longer match its manifest (edited, truncated, deleted)."""


class TableRemoved(FileNotFoundError):
    """A table of a dataset whose files were deleted on purpose (its manifest says when, why)."""


class DatasetRef(BaseModel):
    """The typed hand-off between stages: a finished dataset on the store."""

    model_config = ConfigDict(frozen=True)
    uri: str
    stage: str
    task: str
    key: str
    content_hash: str
    counts: dict[str, int]
    reused: bool = Field(False, description="True when a previous run had already produced it.")


def table_info(rows: int, files: list[str], schema: pa.Schema) -> TableInfo:
    return TableInfo(
        rows=rows, files=files, schema={field.name: str(field.type) for field in schema}
    )


def ref_of(manifest: Manifest, *, reused: bool) -> DatasetRef:
    return DatasetRef(
        uri=manifest.uri,
        stage=manifest.stage,
        task=manifest.task,
        key=manifest.key,
        content_hash=manifest.content_hash,
        counts=manifest.counts,
        reused=reused,
    )
