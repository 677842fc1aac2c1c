"""The approve stage's config: how data is approved (mode, deadline), the key that signs the
records, the reviewers file, and the policy a compliance team sets (`require`,
`reviewers_needed`). A reviewers file that does not read is a config error naming its line."""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from platforms.approvals import ApprovalMode
from platforms.keys import private_key
from platforms.reviewers import Reviewers, read_reviewers
from tasks.approval_policy import ApprovalPolicy, Require
from tasks.licences import LicencePolicy


class ApprovalConfig(BaseModel):
    """How screened data is approved for training."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    mode: ApprovalMode = Field(
        ApprovalMode.manual,
        description="manual: a reviewer decides in the Prefect UI; auto: approved by policy; "
        "auto-if-clean: approved by policy unless the screen flagged something for review.",
    )
    timeout_seconds: int = Field(
        86_400, ge=1, le=30 * 86_400, description="Waiting longer than this counts as rejection."
    )
    poll_seconds: int = Field(5, ge=1, le=300, description="How often a paused run checks in.")
    key_env: str = Field(
        "TUNEGATE_APPROVAL_KEY",
        description="Environment variable holding the key that signs approval records "
        "(at least 16 characters); takes precedence over key_block and key_file.",
    )
    key_block: str | None = Field(
        None, description="Name of a Prefect Secret block holding the signing key."
    )
    key_file: str = Field(
        "~/.config/tunegate/approval.key",
        description="File holding the signing key when neither the variable nor the block is "
        "set (created 0600 on first use). Never inside the store: whoever can write the store "
        "must not be able to sign.",
    )
    licences: LicencePolicy = Field(
        default_factory=LicencePolicy,
        description="Which inputs' licences may be trained on (their datasheets': "
        "docs/review.md); a refused one stops the run before screening.",
    )
    reviewers_file: str | None = Field(
        None,
        description="The reviewers file (as git's allowed_signers: `e-mail name key` lines, "
        "SSH ssh-ed25519 / ecdsa-sha2-nistp256 keys, or `entra` with an [entra] tenant "
        "section): whose signed decisions (`tunegate approve --key`) are verified.",
    )
    require: Require = Field(
        Require.any,
        description="any: a person's decision as typed counts (the UI form, `tunegate approve "
        "--reviewer`); verified: only a decision signed by a listed reviewer counts, the UI "
        "form's answer is recorded as unverified and does not resume the run, and the policy "
        "never approves.",
    )
    reviewers_needed: int = Field(
        1,
        ge=1,
        le=10,
        description="How many different verified reviewers must approve (2: the four-eyes "
        "rule); the same reviewer twice counts once. Above 1 needs require: verified.",
    )

    @field_validator("reviewers_file")
    @classmethod
    def _reviewers_file_reads(cls, path: str | None) -> str | None:
        if path is not None:
            read_reviewers(path)  # a ValueError names the line
        return path

    @model_validator(mode="after")
    def _policy_has_reviewers(self) -> ApprovalConfig:
        if self.require is Require.verified and self.reviewers_file is None:
            raise ValueError(
                "approval.require=verified needs approval.reviewers_file: the reviewers whose "
                "signed decisions count"
            )
        if self.reviewers_needed > 1 and self.require is not Require.verified:
            raise ValueError(
                f"approval.reviewers_needed={self.reviewers_needed} needs approval.require="
                "verified: typed names do not prove different people"
            )
        return self

    def reviewers(self) -> Reviewers | None:
        """The reviewers file, read now (None when not configured)."""
        return read_reviewers(self.reviewers_file) if self.reviewers_file else None

    def policy(self, owners: list[str] | None = None) -> ApprovalPolicy:
        """The decision policy, with the data's `owners` (who may not approve it)."""
        return ApprovalPolicy(
            self.require, self.reviewers_needed, frozenset(o.lower() for o in owners or [] if o)
        )

    def signing_key(self) -> bytes:
        """The key approval records are signed and checked with."""
        if os.environ.get(self.key_env):
            return private_key(self.key_file, self.key_env)
        if self.key_block:
            from prefect.blocks.system import Secret

            value = str(Secret.load(self.key_block).get())
            if len(value) < 16:
                raise ValueError(f"approval.key_block {self.key_block!r} holds under 16 characters")
            return value.encode()
        return private_key(self.key_file)
