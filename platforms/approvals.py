"""Approval records: the signed audit of one decision about one screened dataset, kept in the store.

Every decision (a reviewer's, the policy's, or a review's deadline) is an `ApprovalRecord` bound
to the screened dataset's content hash and signed (HMAC-SHA256) with a key that does not live in
the store. The approve stage writes and finds them here; the registry keeps the approving record
in a version's lineage. A record counts only when its signature holds and the hash it names is
the dataset's: an edited record, one copied into another dataset's folder, or one signed with
another key is not a decision. Decisions stick (`Decisions`): a person's rejection of a dataset
stands until a person approves it, and a run that asks for a person (`manual`) never takes the
policy's approval.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from platforms.datasheet import InputRights
from platforms.hashing import sha256_text, stable_json
from platforms.manifest import DatasetRef
from platforms.store import Store

POLICY = "policy"  # the reviewer of a record the policy made (approval.mode auto, auto-if-clean)
DEADLINE = "timeout"  # the reviewer of a record made when nobody answered in time


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
    # the inputs' datasheets (source, licence, owner, basis) the decision was about; written
    # only when known, so records made before they were kept still verify
    inputs: list[InputRights] = Field(default_factory=list)
    signature: str = ""  # HMAC-SHA256 of every field above, hex; set by `save_approval`
    reused: bool = False

    @model_serializer(mode="wrap")
    def _without_empty_inputs(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        dumped: dict[str, object] = handler(self)
        if not self.inputs:
            dumped.pop("inputs", None)
        return dumped

    @property
    def approved(self) -> bool:
        return self.decision == "approved"

    @property
    def by_person(self) -> bool:
        """Whether a person decided (not the policy, nor a review's deadline)."""
        return self.reviewer not in (POLICY, DEADLINE)

    def described(self) -> str:
        """One line a person reads: what was decided, by whom, when and why."""
        who = "the policy" if self.reviewer == POLICY else self.reviewer
        why = f": {self.comment}" if self.comment else ""
        return f"{self.decision} by {who} on {self.decided_at}{why}"

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


@dataclass(frozen=True)
class Decisions:
    """The valid decisions about one dataset, newest first, and why any other record claiming to
    be one is not (each problem names the record's file)."""

    records: list[ApprovalRecord]
    problems: list[str]

    @property
    def by_person(self) -> ApprovalRecord | None:
        """A person's newest decision."""
        return next((r for r in self.records if r.by_person), None)

    @property
    def rejected(self) -> ApprovalRecord | None:
        """A person's rejection that no person has overturned since: it stands."""
        latest = self.by_person
        return latest if latest is not None and not latest.approved else None

    @property
    def by_policy(self) -> ApprovalRecord | None:
        """The policy's newest approval."""
        return next((r for r in self.records if r.approved and r.reviewer == POLICY), None)

    def approval(self, person_only: bool) -> ApprovalRecord | None:
        """The approval a run may reuse (None when a person's rejection stands): a person's
        newest approval, or, unless `person_only`, the newest approval of anyone."""
        if self.rejected is not None:
            return None
        found = (
            self.by_person if person_only else next((r for r in self.records if r.approved), None)
        )
        return found.model_copy(update={"reused": True}) if found is not None else None


def find_decisions(store: Store, screened: DatasetRef, key: bytes) -> Decisions:
    """Every valid decision about this exact screened data, newest first."""
    records, problems = [], []
    for uri in store.list(store.path("approvals", screened.content_hash)):
        short = uri.rsplit("/", 1)[-1]
        try:
            record = ApprovalRecord.model_validate_json(store.read_text(uri))
        except ValueError:
            problems.append(f"approval record {short} is unreadable")
            continue
        if (problem := record.problem(key, screened.content_hash)) is not None:
            problems.append(f"approval record {short} is not valid: {problem}")
            continue
        records.append(record)
    records.sort(key=lambda r: r.decided_at, reverse=True)  # newest first
    return Decisions(records, problems)


def save_approval(store: Store, record: ApprovalRecord, key: bytes) -> ApprovalRecord:
    """Sign the record and keep it, one file per decision, under the dataset hash and beside the
    dataset. Returns the signed record."""
    record = record.signed(key)
    text = record.model_dump_json(indent=2)
    name = f"{record.decided_at.replace(':', '')}-{record.decision}-{uuid.uuid4().hex[:6]}.json"
    store.write_text_atomic(store.path("approvals", record.dataset_hash, name), text)
    store.write_text_atomic(f"{record.dataset_uri}/approval.json", text)
    return record
