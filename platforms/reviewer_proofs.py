"""A reviewer's proof of who they are, sent with their decision, checked by the run.

`tunegate approve|reject --key` (or `--agent`, or `--token`) sends a `Proof` with the decision:
the time and the data it signed, and an SSH signature of `decision_payload` or an Entra ID
token. The run rebuilds the decision as an `ApprovalRecord` and `prove` returns it with the
reviewer's `Identity` from the reviewers file, or raises `ProofRefused` saying why it is no
decision: a key or a person not listed, a signature of other content, another run's or other
data's decision, a token that does not verify.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from platforms.approvals import ApprovalRecord, Identity
from platforms.entra import TokenRefused, verify_token
from platforms.reviewers import Reviewers
from platforms.ssh_signatures import BadSignature, fingerprint, verify


class ProofRefused(ValueError):
    """A decision whose proof does not hold: it is no decision; the message says why."""


class Proof(BaseModel):
    """What a signed answer carries besides the form's fields (as JSON in its `proof` field)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    method: Literal["ssh", "entra"]
    decided_at: str  # the time that was signed
    dataset_hash: str  # the data the reviewer was shown and signed for
    flow_run_id: str | None = None  # the run it was signed for
    signature: str = ""  # ssh: armored SSH signature of the decision's payload
    token: str = ""  # entra: the reviewer's access token


def prove(record: ApprovalRecord, proof: Proof, reviewers: Reviewers | None) -> ApprovalRecord:
    """`record` with its reviewer's `Identity`, once `proof` holds for it (ProofRefused if not).
    `record` is the decision as the run rebuilt it from the answer and the proof's time."""
    if reviewers is None:
        raise ProofRefused(
            "the decision is signed but approval.reviewers_file is not set, so no key or "
            "person is trusted: list the reviewers (docs/review.md)"
        )
    if proof.dataset_hash != record.dataset_hash:
        raise ProofRefused(
            f"it was signed for data {proof.dataset_hash[:16]}, and this run's screened data "
            f"is {record.dataset_hash[:16]}"
        )
    if proof.flow_run_id != record.flow_run_id:
        raise ProofRefused(f"it was signed for run {proof.flow_run_id}, not {record.flow_run_id}")
    if proof.method == "ssh":
        identity = _ssh_identity(record, proof.signature, reviewers)
    else:
        identity = _entra_identity(proof.token, reviewers)
    if identity.email.lower() != record.reviewer.lower():
        raise ProofRefused(
            f"it names the reviewer {record.reviewer}, but the proof is {identity.email}'s"
        )
    return record.model_copy(update={"identity": identity})  # `reviewer` stays as signed


def _ssh_identity(record: ApprovalRecord, signature: str, reviewers: Reviewers) -> Identity:
    try:
        key = verify(signature, record.payload())
    except BadSignature as exc:
        raise ProofRefused(str(exc)) from None
    key_fingerprint = fingerprint(key)
    person = reviewers.by_fingerprint(key_fingerprint)
    if person is None:
        raise ProofRefused(f"the key {key_fingerprint} is not in {reviewers.path}")
    return Identity(
        method="ssh",
        email=person.email,
        name=person.name,
        fingerprint=key_fingerprint,
        signature=signature,
    )


def _entra_identity(token: str, reviewers: Reviewers) -> Identity:
    if reviewers.entra is None:
        raise ProofRefused(f"an Entra ID token, but {reviewers.path} has no [entra] section")
    try:
        claims = verify_token(token, reviewers.entra)
    except TokenRefused as exc:
        raise ProofRefused(str(exc)) from None
    person = reviewers.by_entra(claims.object_id, [claims.username])
    if person is None:
        raise ProofRefused(
            f"{claims.username or claims.object_id} (Entra ID {claims.object_id}) is not a "
            f"reviewer in {reviewers.path}"
        )
    return Identity(
        method="entra",
        email=person.email,
        name=person.name,
        object_id=claims.object_id,
        username=claims.username,
        tenant=claims.tenant,
    )
