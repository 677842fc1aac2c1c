"""Which decisions approve data: the policy a compliance team sets, as a pure function.

- `require: any` (the default): a person's decision as typed counts (today's single-user
  behaviour); `verified`: only decisions whose reviewer proved who they are (an SSH signature
  by a listed key, an Entra ID token) count, and the policy itself never approves;
- `reviewers_needed: N`: N different verified reviewers approve the same thing (the same
  excluded ids): the same reviewer twice counts once (the four-eyes rule for N = 2);
- the data's owners may not approve it: their approvals do not count (a rejection does).

`tally` returns the `Standing`: the approval the run may go on with, a rejection that stands, or
neither, with who has approved so far and why any other decision does not count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from platforms.approvals import ApprovalRecord, Decisions


class Require(StrEnum):
    any = "any"
    verified = "verified"


@dataclass(frozen=True)
class ApprovalPolicy:
    require: Require = Require.any
    reviewers_needed: int = 1
    owners: frozenset[str] = frozenset()  # e-mails, lower case

    @property
    def is_default(self) -> bool:
        """Today's single-user behaviour: one person's decision as typed, no owner named."""
        return self.require is Require.any and self.reviewers_needed == 1 and not self.owners

    @property
    def verified(self) -> bool:
        return self.require is Require.verified


@dataclass(frozen=True)
class Standing:
    approval: ApprovalRecord | None = None  # the approval the run may go on with
    rejection: ApprovalRecord | None = None  # a person's rejection that stands
    approvers: tuple[str, ...] = ()  # who approved the newest proposal so far
    notes: tuple[str, ...] = field(default_factory=tuple)  # what does not count, and why

    def waiting_line(self, policy: ApprovalPolicy) -> str:
        """What the run still waits for, in a sentence."""
        have = ", ".join(self.approvers) or "nobody yet"
        missing = policy.reviewers_needed - len(self.approvers)
        kind = "verified " if policy.verified else ""
        return (
            f"{policy.reviewers_needed} different {kind}reviewers must approve the same "
            f"excluded ids; approved by {have}: {missing} more needed"
        )


def tally(decisions: Decisions, policy: ApprovalPolicy, person_only: bool) -> Standing:
    """Where the decisions about one dataset stand under `policy` (newest decision first)."""
    if policy.is_default:
        return Standing(approval=decisions.approval(person_only), rejection=decisions.rejected)
    notes: list[str] = []
    counted: list[ApprovalRecord] = []
    for record in decisions.records:
        if not record.by_person:  # the policy's or a deadline's: never overturns a person
            continue
        if policy.verified and not record.verified:
            notes.append(f"{record.described()} is unverified: not counted")
            continue
        if not record.approved:
            if not counted:  # the newest decision of a person: it stands
                return Standing(rejection=record, notes=tuple(notes))
            break  # approvals since then overturn it
        if _who(record) in policy.owners:
            notes.append(f"{_who(record)} owns this data and may not approve it: not counted")
            continue
        counted.append(record)
    if not counted:
        by_policy = None if person_only or policy.verified else decisions.by_policy
        return Standing(approval=by_policy, notes=tuple(notes))
    newest = counted[0]
    same = [r for r in counted if sorted(r.exclude_ids) == sorted(newest.exclude_ids)]
    approvers = tuple(dict.fromkeys(_who(r) for r in same))
    if len(approvers) >= policy.reviewers_needed:
        return Standing(approval=newest, approvers=approvers, notes=tuple(notes))
    return Standing(approvers=approvers, notes=tuple(notes))


def _who(record: ApprovalRecord) -> str:
    """The reviewer: the proved e-mail when there is one, else the name as typed (lower case)."""
    return (record.identity.email if record.identity else record.reviewer).lower()
