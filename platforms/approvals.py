"""Approval records: the signed audit of one decision about one screened dataset, kept in the store.

Every decision (a reviewer's, or the policy's) is an `ApprovalRecord` bound to the screened
dataset's content hash and signed (HMAC-SHA256) with a key that does not live in the store. The
approve stage writes and finds them here; the registry keeps the approving record in a version's
lineage. A record is an approval of a dataset only when its signature holds and the hash it names
is the dataset's: an edited record, one copied into another dataset's folder, or one signed with
another key is not.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from platforms.store import DatasetRef, Store, sha256_text, stable_json


class ApprovalMode(StrEnum):
    manual = "manual"
    auto = "auto"
    auto_if_clean = "auto-if-clean"


class ApprovalRecord(BaseModel):
    """The audit record of one decision about one screened dataset."""

    model_config = ConfigDict(frozen=True)
    decision: Literal["approved", "rejected"]
    reviewer: str
    comment: str
    decided_at: str
    mode: ApprovalMode
    dataset_uri: str
    dataset_hash: str
    report_hash: str
    flow_run_id: str | None
    exclude_ids: list[str] = Field(default_factory=list)
    signature: str = ""  # HMAC-SHA256 of every field above, hex; set by `save_approval`
    reused: bool = False

    @property
    def approved(self) -> bool:
        return self.decision == "approved"

    def signed_content(self) -> bytes:
        """What the signature covers: every field but the signature and `reused`."""
        return stable_json(self.model_dump(mode="json", exclude={"signature", "reused"})).encode()

    def signed(self, key: bytes) -> ApprovalRecord:
        digest = hmac.new(key, self.signed_content(), hashlib.sha256).hexdigest()
        return self.model_copy(update={"signature": digest})

    def problem(self, key: bytes, dataset_hash: str) -> str | None:
        """Why this record is no approval of the dataset `dataset_hash` (None when it is)."""
        if not self.signature:
            return "it is not signed"
        if not hmac.compare_digest(self.signed(key).signature, self.signature):
            return "its signature does not match its content (edited, or signed with another key)"
        if self.dataset_hash != dataset_hash:
            return f"it approves dataset {self.dataset_hash[:16]}, not {dataset_hash[:16]}"
        return None

    @property
    def record_hash(self) -> str:
        """The hash of the signed record, kept in the registry's lineage."""
        return sha256_text(stable_json(self.model_dump(mode="json", exclude={"reused"})))


def find_approval(
    store: Store, screened: DatasetRef, key: bytes
) -> tuple[ApprovalRecord | None, list[str]]:
    """The latest valid approval of this exact screened data, if any, and why each record that
    claims to approve it is not valid (each problem names the record's file)."""
    problems = []
    for uri in reversed(store.list(store.path("approvals", screened.content_hash))):
        short = uri.rsplit("/", 1)[-1]
        try:
            record = ApprovalRecord.model_validate_json(store.read_text(uri))
        except ValueError:
            problems.append(f"approval record {short} is unreadable")
            continue
        if not record.approved:
            continue
        if (problem := record.problem(key, screened.content_hash)) is not None:
            problems.append(f"approval record {short} is not valid: {problem}")
            continue
        return record.model_copy(update={"reused": True}), problems
    return None, problems


def save_approval(store: Store, record: ApprovalRecord, key: bytes) -> ApprovalRecord:
    """Sign the record and keep it, one file per decision, under the dataset hash and beside the
    dataset. Returns the signed record."""
    record = record.signed(key)
    text = record.model_dump_json(indent=2)
    name = f"{record.decided_at.replace(':', '')}-{record.decision}-{uuid.uuid4().hex[:6]}.json"
    store.write_text_atomic(store.path("approvals", record.dataset_hash, name), text)
    store.write_text_atomic(f"{record.dataset_uri}/approval.json", text)
    return record
