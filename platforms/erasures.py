"""The erasure log: what was erased from the store, when, by whom; never the value itself.

One signed JSON file per erasure under `{store}/erasures/` (tasks/erasure.py writes them): the
record ids erased, a keyed hash of a value searched for (HMAC-SHA256 with the store's signing
key, so the log cannot be searched for a guessed e-mail without the key), every dataset
rewritten with the rows it lost and its content hash before and after, and the model versions
marked `needs-retrain`. Every later ingest and split leaves the erased ids out (`erased_ids`),
so a run that reads the inputs again, which may still hold the record, neither keeps nor trains
on it (a value is not kept: an input holding it under another id is its owner's to clean).
"""

from __future__ import annotations

import hashlib
import hmac
import logging

from pydantic import BaseModel, ConfigDict, Field

from platforms.hashing import stable_json
from platforms.store import Store

log = logging.getLogger(__name__)
FOLDER = "erasures"


class ErasedDataset(BaseModel):
    """One dataset rewritten without the erased records."""

    model_config = ConfigDict(frozen=True)
    uri: str = Field(description="The dataset, relative to the store.")
    stage: str
    rows: dict[str, int] = Field(description="Rows removed, by table.")
    content_hash_before: str
    content_hash_after: str


class ErasureRecord(BaseModel):
    """The audit of one erasure."""

    model_config = ConfigDict(frozen=True)
    erasure_id: str
    erased_at: str
    erased_by: str
    asked_for: str = Field(description="`id` (record ids given) or `value` (a value searched).")
    value_hash: str | None = Field(
        None, description="HMAC-SHA256 (the store's signing key) of the value searched for."
    )
    record_ids: list[str] = Field(
        default_factory=list, description="The record ids erased; every later split drops them."
    )
    datasets: list[ErasedDataset] = Field(default_factory=list)
    models: list[str] = Field(
        default_factory=list, description="Versions (`name:version`) marked needs-retrain."
    )
    retrain: bool = Field(False, description="Whether a retrain was started right after.")
    signature: str = ""

    def signed_content(self) -> bytes:
        return stable_json(self.model_dump(mode="json", exclude={"signature"})).encode()

    def signed(self, key: bytes) -> ErasureRecord:
        digest = hmac.new(key, self.signed_content(), hashlib.sha256).hexdigest()
        return self.model_copy(update={"signature": digest})

    def verifies(self, key: bytes) -> bool:
        return bool(self.signature) and hmac.compare_digest(
            self.signed(key).signature, self.signature
        )


def value_hash(value: str, key: bytes | None) -> str:
    """The hash the log keeps of a value (trimmed, case folded): keyed when the store has a
    key, a plain SHA-256 otherwise."""
    data = value.strip().casefold().encode("utf-8")
    if key is None:
        return hashlib.sha256(data).hexdigest()
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def save_erasure(store: Store, record: ErasureRecord) -> ErasureRecord:
    """Sign (with the store's key, when it has one) and keep the record; returns it signed."""
    if store.signing_key is not None:
        record = record.signed(store.signing_key)
    name = f"{record.erased_at.replace(':', '')}-{record.erasure_id}.json"
    store.write_text_atomic(store.path(FOLDER, name), record.model_dump_json(indent=2))
    return record


def erasures(store: Store) -> list[ErasureRecord]:
    """Every erasure of the store, oldest first; one whose signature fails is still listed
    (its ids are still left out: an erasure asks for less data, never more) and warned of."""
    found = []
    for uri in store.list(store.path(FOLDER)):
        record = ErasureRecord.model_validate_json(store.read_text(uri))
        if store.signing_key is not None and not record.verifies(store.signing_key):
            log.warning("erasure record %s does not verify with this store's key", uri)
        found.append(record)
    return sorted(found, key=lambda r: r.erased_at)


def erased_ids(store: Store) -> set[str]:
    """Every record id ever erased from the store."""
    return {i for record in erasures(store) for i in record.record_ids}
