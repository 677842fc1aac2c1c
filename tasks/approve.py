"""approve: the human gate between screening and training.

The flow pauses for an `ApprovalInput` (tasks/pause.py); the Prefect UI shows a short summary
that links to the full review (the `review` artifact, tasks/review.py: every flagged and
quarantined record masked, with findings and reasons, and the changes since the last approval)
and a form (an explicit decision, reviewer, comment, record ids to exclude). Every decision becomes a
signed `ApprovalRecord` on the store (platforms/approvals.py), bound to the screened dataset's
content hash: a later run over the same screened data finds the approval and does not pause
again, but only when the signature holds and the hash it names is the dataset's. An edited
record, one copied into another dataset's folder, or one signed with another key is not an
approval: a manual run asks for a new review (saying why), an automatic one stops. This module
resolves the signing key, lets the policy decide or asks the reviewer, and writes the artifacts.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime
from typing import Literal
from uuid import UUID

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from prefect.context import FlowRunContext
from prefect.input import RunInput
from pydantic import BaseModel, ConfigDict, Field

from platforms.approvals import (
    DEADLINE,
    POLICY,
    ApprovalMode,
    ApprovalRecord,
    Decisions,
    find_decisions,
    save_approval,
)
from platforms.backends import Backends
from platforms.keys import private_key
from platforms.manifest import DatasetRef
from platforms.notify import emit_decision
from screening.report import Screened, ScreenReport, counts_markdown, report_hash
from tasks import pause
from tasks.review import ARTIFACT_KEY, review_markdown, review_records
from tasks.review_changes import (
    ReviewChanges,
    changes_markdown,
    changes_summary,
    compare,
    remember_approved,
)
from tasks.review_kept import kept_changes

log = logging.getLogger(__name__)


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


class ApprovalInput(RunInput):
    """The reviewer's form in the Prefect UI: the decision has no default, so a form with only a
    reviewer filled in is refused rather than taken as a rejection."""

    decision: Literal["approve", "reject"] = Field(
        description="approve: train on this screened data; reject: stop the run here."
    )
    reviewer: str = Field(min_length=1, description="Your name or e-mail, kept in the audit.")
    comment: str = Field("", description="Why (kept in the audit record).")
    exclude_ids: list[str] = Field(
        default_factory=list, description="Record ids to leave out of training."
    )

    @property
    def approved(self) -> bool:
        return self.decision == "approve"


class DataRejected(RuntimeError):
    """Raised to stop a flow whose data was not approved; the message says who and why."""


class ApprovalInvalid(DataRejected):
    """An automatic run found an approval record of its data that does not verify."""


def decide_by_policy(mode: ApprovalMode, report: ScreenReport) -> str | None:
    """The policy's own decision, or None when a person has to decide."""
    if mode is ApprovalMode.auto:
        return "approved by policy (approval.mode=auto)"
    if mode is ApprovalMode.auto_if_clean and not report.needs_review:
        return "approved by policy: nothing flagged for review (approval.mode=auto-if-clean)"
    return None


def make_record(
    screened: DatasetRef,
    report: ScreenReport,
    mode: ApprovalMode,
    *,
    approved: bool,
    reviewer: str,
    comment: str,
    exclude_ids: list[str] | None = None,
) -> ApprovalRecord:
    context = FlowRunContext.get()
    return ApprovalRecord(
        decision="approved" if approved else "rejected",
        reviewer=reviewer,
        comment=comment,
        decided_at=datetime.now(UTC).isoformat(timespec="microseconds"),  # orders decisions
        mode=mode,
        dataset_uri=screened.uri,
        dataset_hash=screened.content_hash,
        report_hash=report_hash(report),
        flow_run_id=str(context.flow_run.id) if context and context.flow_run else None,
        exclude_ids=sorted(set(exclude_ids or [])),
    )


def request_review(
    screened: DatasetRef,
    report: ScreenReport,
    config: ApprovalConfig,
    review: str = "",
    problems: list[str] | None = None,
) -> ApprovalRecord:
    """Pause the flow run until a reviewer answers in the UI (or the API); timeout = rejected.
    The form's description is a short summary; `review` is its part that links to the full
    review and says what changed (`review_summary`)."""
    warning = "".join(f"> **Asked again:** {p}.\n\n" for p in problems or [])
    description = "\n".join(
        [
            "## Approve this data for training?",
            *(["", review] if review else []),  # first: the form shows ~330 px of this
            "",
            warning + f"Dataset `{screened.uri}` (content hash `{screened.content_hash[:16]}`).",
            "",
            *counts_markdown(report)[:5],  # the counts; the findings are in the review
        ]
    )
    context = FlowRunContext.get()
    if context is not None and context.flow_run is not None:
        log.warning("%s", how_to_answer(str(context.flow_run.id)))
    # Initial data only for the description: `with_initial_data(field=value)` redefines the field
    # without its description and constraints (prefect 3.8.8), so an empty reviewer would pass.
    comment = f"no decision within {config.timeout_seconds}s"
    answer = pause.ask(
        ApprovalInput,
        {"decision": "reject", "reviewer": DEADLINE, "comment": comment},
        config.timeout_seconds,
        config.poll_seconds,
        initial={"description": description},
    )
    return make_record(
        screened,
        report,
        config.mode,
        approved=answer.approved,
        reviewer=answer.reviewer,
        comment=answer.comment,
        exclude_ids=answer.exclude_ids,
    )


@task(name="approve", cache_policy=NONE)
def approve_task(
    backends: Backends,
    screened: Screened,
    config: ApprovalConfig,
    model: str | None = None,
) -> ApprovalRecord:
    """Reuse an approval of the same data, let the policy decide, or ask a reviewer. Decisions
    stick: a person's rejection stands against the policy until a person approves, and a
    `manual` run reuses a person's approval only, never the policy's. A rejection of data for
    `model` is announced as a `tunegate.data.rejected` event (a paused run announces itself:
    Prefect emits `prefect.flow-run.Paused`)."""
    store, dataset, report = backends.store, screened.dataset, screened.report
    key = config.signing_key()
    decisions = find_decisions(store, dataset, key)
    for problem in decisions.problems:
        log.warning("approval: %s", problem)
    manual = config.mode is ApprovalMode.manual
    record = decisions.approval(person_only=manual)
    if record is None:
        policy = None if manual else decide_by_policy(config.mode, report)
        if policy is not None and decisions.problems:
            raise _rejected(
                screened,
                model,
                "no policy (a tampered approval record)",
                "; ".join(decisions.problems) + f": an approval of {dataset.content_hash[:16]} "
                "was tampered with, so no policy approves it; check the store's approvals/ "
                "folder, then run with approval.mode=manual to have it reviewed again",
                ApprovalInvalid,
            )
        if policy is not None and decisions.rejected is not None:
            raise _rejected(
                screened,
                model,
                "an earlier reviewer",
                f"this data was {decisions.rejected.described()}; a person's rejection stands "
                f"against approval.mode={config.mode.value}: run with approval.mode=manual to "
                "have it reviewed again",
            )
        if policy is not None:
            record = make_record(
                dataset, report, config.mode, approved=True, reviewer=POLICY, comment=policy
            )
        else:
            changes = compare(store, dataset, report, model) if model else None
            create_markdown_artifact(
                key="review-changes", markdown=changes_markdown(changes, model or "")
            )
            review_id = create_markdown_artifact(
                key=ARTIFACT_KEY,
                markdown=review_markdown(
                    dataset,
                    report,
                    review_records(store, dataset),
                    changes,
                    kept_changes(store, dataset),
                ),
                description=f"Review of screened data {dataset.content_hash[:16]}",
            )
            earlier = _earlier_decisions(decisions, manual)
            for note in earlier:
                log.info("approval: %s", note)
            record = request_review(
                dataset,
                report,
                config,
                review_summary(report, changes, review_id, model or ""),
                [*decisions.problems, *earlier],
            )
        record = save_approval(store, record, key)
    create_markdown_artifact(key="approval", markdown=approval_markdown(record))
    log.info(
        "approval: %s by %s%s",
        record.decision,
        record.reviewer,
        " (reused)" if record.reused else "",
    )
    if record.approved and model:
        remember_approved(store, model, record, datetime.now(UTC).isoformat())
    if not record.approved:
        raise _rejected(
            screened,
            model,
            "the deadline" if record.reviewer == DEADLINE else "a reviewer",
            f"data rejected by {record.reviewer}: {record.comment or 'no comment'}; "
            "nothing was split or trained",
        )
    return record


def _rejected(
    screened: Screened,
    model: str | None,
    by: str,
    message: str,
    kind: type[DataRejected] = DataRejected,
) -> DataRejected:
    """The exception that stops the run, its `tunegate.data.rejected` event emitted first (counts
    and the dataset's hash; neither the reviewer nor the comment, which are free text)."""
    if model is not None:
        report = screened.report
        emit_decision(
            "data-rejected",
            model,
            {
                "dataset_hash": screened.dataset.content_hash,
                "decided_by": by,
                "kept": report.kept,
                "redacted": report.redacted,
                "quarantined": report.quarantined,
            },
        )
    return kind(message)


def review_summary(
    report: ScreenReport, changes: ReviewChanges | None, review_id: UUID | None, model: str = ""
) -> str:
    """The form's link to the full review (the `review` artifact's page in the Prefect UI), what
    the screen changed in kept records, and one line of what changed since the last approval."""
    replaced = sum(c.findings for c in report.changed)
    what = (
        f"every flagged ({report.flagged}) and quarantined ({report.quarantined}) record with "
        f"what it was flagged for, the {replaced} values replaced in kept records before and "
        "after, and the changes since the last approval"
    )
    link = f"**[Read the full review]({artifact_url(review_id)})**: {what}." if review_id else ""
    kept = (
        "**Changed in kept records** (training gets them so): "
        + ", ".join(f"{c.entity} {c.findings} ({c.action})" for c in report.changed)
        + "."
        if report.changed
        else ""
    )
    return "\n\n".join(p for p in (link, kept, changes_summary(changes, model)) if p)


def artifact_url(artifact_id: UUID) -> str:
    """An artifact's page in the Prefect UI (relative to the UI when PREFECT_UI_URL is unset:
    the form is shown by that same UI)."""
    from prefect.settings import PREFECT_UI_URL

    ui = (PREFECT_UI_URL.value() or "").rstrip("/")
    return f"{ui}/artifacts/artifact/{artifact_id}"


def how_to_answer(flow_run_id: str) -> str:
    """What a reviewer runs to answer this paused run: the exact commands (with the API they
    must reach: a run's temporary server too) and the run's page in the Prefect UI."""
    from prefect.settings import PREFECT_API_URL, PREFECT_UI_URL

    api, ui = PREFECT_API_URL.value(), PREFECT_UI_URL.value()
    env = f"PREFECT_API_URL={api} " if api else ""
    lines = [
        f"run {flow_run_id} waits for a reviewer's decision on its screened data:",
        f"  {env}tunegate approve {flow_run_id} --reviewer YOU --comment WHY [--exclude ID ...]",
        f"  {env}tunegate reject {flow_run_id} --reviewer YOU --comment WHY",
        f"  the review (every flagged and quarantined record, masked): "
        f"{env}tunegate review show {flow_run_id}",
    ]
    if ui:
        lines.append(f"  or in the Prefect UI: {ui.rstrip('/')}/runs/flow-run/{flow_run_id}")
    return "\n".join(lines)


def _earlier_decisions(decisions: Decisions, manual: bool) -> list[str]:
    """What the reviewer is told of earlier decisions about the same data."""
    notes = []
    if decisions.rejected is not None:
        notes.append(f"this data was {decisions.rejected.described()}")
    if manual and decisions.by_policy is not None:
        notes.append(
            f"an automatic approval of this data exists ({decisions.by_policy.described()}), "
            "but approval.mode=manual asks a person"
        )
    return notes


def approval_markdown(record: ApprovalRecord) -> str:
    return "\n".join(
        [
            f"### Data {record.decision}",
            "",
            "| field | value |",
            "|---|---|",
            *[f"| {k} | {v} |" for k, v in record.model_dump(mode="json").items()],
        ]
    )
