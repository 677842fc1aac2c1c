"""Approval records: the signed audit of one decision about one screened dataset, kept in the store.

Every decision (a reviewer's, the policy's, or a review's deadline) is an `ApprovalRecord` bound
to the screened dataset's content hash and signed (HMAC-SHA256) with a key that does not live in
the store. The approve stage writes and finds them here; the registry keeps the approving record
in a version's lineage. A record counts only when its signature holds and the hash it names is
the dataset's: an edited record, one copied into another dataset's folder, or one signed with
another key is not a decision. A person's decision may also carry their `Identity`: the
signature of the decision by their SSH key (checked again whenever the record is read, against
the reviewers file when one is configured), or what their Entra ID token proved when the run
checked it (platforms/reviewer_proofs.py). Decisions stick (`Decisions`): a person's rejection of a dataset
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
from platforms.reviewers import Reviewers
from platforms.ssh_signatures import BadSignature, fingerprint, verify
from platforms.store import Store

POLICY = "policy"  # the reviewer of a record the policy made (approval.mode auto, auto-if-clean)
DEADLINE = "timeout"  # the reviewer of a record made when nobody answered in time


class ApprovalMode(StrEnum):
    manual = "manual"
    auto = "auto"
    auto_if_clean = "auto-if-clean"


class Identity(BaseModel):
    """Who a decision's reviewer proved to be, and how: an SSH signature of the decision by a key
    of the reviewers file (kept, so anyone can check it again), or an Entra ID token the run
    checked (not kept: a token is a credential until it expires; its claims are)."""

    model_config = ConfigDict(frozen=True)
    method: Literal["ssh", "entra"]
    email: str  # as the reviewers file lists them
    name: str
    fingerprint: str = ""  # ssh: SHA256:..., as `ssh-keygen -l` prints it
    signature: str = ""  # ssh: the armored SSH signature of `decision_payload`
    object_id: str = ""  # entra: `oid`
    username: str = ""  # entra: `upn` / `preferred_username`
    tenant: str = ""  # entra: `tid`

    def described(self) -> str:
        """How they proved it: `SSH key SHA256:...` or `Entra ID <oid>`."""
        return (
            f"SSH key {self.fingerprint}" if self.method == "ssh" else f"Entra ID {self.object_id}"
        )


def decision_payload(
    *,
    dataset_hash: str,
    decision: str,
    exclude_ids: list[str],
    comment: str,
    decided_at: str,
    flow_run_id: str | None,
    reviewer: str,
) -> bytes:
    """What a reviewer's key signs: the decision, about which data, in which run, by whom, when
    (canonical JSON, so the command that signs and the run that checks build the same bytes)."""
    return stable_json(
        {
            "dataset_hash": dataset_hash,
            "decision": decision,
            "exclude_ids": sorted(set(exclude_ids)),
            "comment": comment,
            "decided_at": decided_at,
            "flow_run_id": flow_run_id,
            "reviewer": reviewer,
        }
    ).encode()


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
    identity: Identity | None = None  # who the reviewer proved to be (None: what was typed)
    # the screening profile (`screen.profile`) that screened the data; None: the default one
    # (personal), and every record written before profiles, which still verifies
    screen_profile: str | None = None
    # the inputs screened with another profile (`screen.profiles`): input → profile; empty in
    # every record written before per-input profiles, which still verifies
    input_profiles: dict[str, str] = Field(default_factory=dict)
    signature: str = ""  # HMAC-SHA256 of every field above, hex; set by `save_approval`
    reused: bool = False

    @model_serializer(mode="wrap")
    def _without_empty_inputs(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        dumped: dict[str, object] = handler(self)
        if not self.inputs:
            dumped.pop("inputs", None)
        if self.screen_profile is None:
            dumped.pop("screen_profile", None)
        if not self.input_profiles:
            dumped.pop("input_profiles", None)
        if self.identity is None:  # what was typed: as every record before identities was
            dumped.pop("identity", None)
        return dumped

    @property
    def approved(self) -> bool:
        return self.decision == "approved"

    @property
    def by_person(self) -> bool:
        """Whether a person decided (not the policy, nor a review's deadline)."""
        return self.reviewer not in (POLICY, DEADLINE)

    @property
    def verified(self) -> bool:
        """Whether the reviewer proved who they are (an SSH signature or an Entra ID token)."""
        return self.identity is not None

    def described(self) -> str:
        """One line a person reads: what was decided, by whom, when and why."""
        who = "the policy" if self.reviewer == POLICY else self.reviewer
        if self.identity is not None:
            who = f"{who} (verified by {self.identity.described()})"
        why = f": {self.comment}" if self.comment else ""
        return f"{self.decision} by {who} on {self.decided_at}{why}"

    def payload(self) -> bytes:
        """What the reviewer's key signed (`decision_payload` of this record)."""
        return decision_payload(
            dataset_hash=self.dataset_hash,
            decision=self.decision,
            exclude_ids=self.exclude_ids,
            comment=self.comment,
            decided_at=self.decided_at,
            flow_run_id=self.flow_run_id,
            reviewer=self.reviewer,
        )

    def signed_content(self) -> bytes:
        """What the signature covers: every field but the signature and `reused` (no
        `identity` key when there is none, so records written before it still verify)."""
        return stable_json(self.model_dump(mode="json", exclude={"signature", "reused"})).encode()

    def signed(self, key: bytes) -> ApprovalRecord:
        digest = hmac.new(key, self.signed_content(), hashlib.sha256).hexdigest()
        return self.model_copy(update={"signature": digest})

    def problem(
        self, key: bytes, dataset_hash: str, reviewers: Reviewers | None = None
    ) -> str | None:
        """Why this record is no approval of the dataset `dataset_hash` (None when it is)."""
        if not self.signature:
            return "it is not signed"
        if not hmac.compare_digest(self.signed(key).signature, self.signature):
            return "its signature does not match its content (edited, or signed with another key)"
        if self.dataset_hash != dataset_hash:
            return f"it approves dataset {self.dataset_hash[:16]}, not {dataset_hash[:16]}"
        return self.identity_problem(reviewers)

    def identity_problem(self, reviewers: Reviewers | None) -> str | None:
        """Why the reviewer's proof no longer holds (None when it does, or there is none): an
        SSH signature must verify over the record's own fields, by the key it names, and that
        key must be listed for the reviewer in `reviewers` (when given)."""
        identity = self.identity
        if identity is None or identity.method != "ssh":
            return None
        try:
            key = verify(identity.signature, self.payload())
        except BadSignature as exc:
            return f"the reviewer's SSH signature fails: {exc}"
        if fingerprint(key) != identity.fingerprint:
            return f"it was signed by {fingerprint(key)}, not the {identity.fingerprint} it names"
        if reviewers is not None:
            listed = reviewers.by_fingerprint(identity.fingerprint)
            if listed is None or listed.email.lower() != identity.email.lower():
                return (
                    f"{identity.email}'s key {identity.fingerprint} is not listed for them in "
                    f"{reviewers.path}"
                )
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


def find_decisions(
    store: Store, screened: DatasetRef, key: bytes, reviewers: Reviewers | None = None
) -> Decisions:
    """Every valid decision about this exact screened data, newest first; a reviewer's proof is
    checked against `reviewers` when given."""
    records, problems = [], []
    for uri in store.list(store.path("approvals", screened.content_hash)):
        short = uri.rsplit("/", 1)[-1]
        try:
            record = ApprovalRecord.model_validate_json(store.read_text(uri))
        except ValueError:
            problems.append(f"approval record {short} is unreadable")
            continue
        if (problem := record.problem(key, screened.content_hash, reviewers)) is not None:
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
