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
import time
from datetime import UTC, datetime
from typing import Literal
from uuid import UUID

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from prefect.context import FlowRunContext
from prefect.input import RunInput
from pydantic import ConfigDict, Field, ValidationError
from pydantic.json_schema import SkipJsonSchema

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
from platforms.datasheet import DataRights
from platforms.manifest import DatasetRef
from platforms.notify import emit_decision
from platforms.reviewer_proofs import Proof, ProofRefused, prove
from platforms.reviewers import Reviewers
from platforms.store import Store
from screening.profiles import DEFAULT_PROFILE
from screening.report import Screened, ScreenReport, counts_line, report_hash
from tasks import pause
from tasks.approval_config import ApprovalConfig
from tasks.approval_policy import ApprovalPolicy, Require, Standing, tally
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
    # Filled in by `tunegate approve --key|--agent|--token` (a signature or token), never shown:
    # a form cannot sign, and under approval.require=verified its answer does not resume a run.
    # Left out of the form's schema, which then admits it (and ignores any other extra field).
    model_config = ConfigDict(extra="ignore")
    proof: SkipJsonSchema[str] = ""

    @property
    def approved(self) -> bool:
        return self.decision == "approve"

    def signed(self) -> Proof | None:
        """The proof sent with this answer (None: a typed answer); ProofRefused if unreadable."""
        if not self.proof:
            return None
        try:
            return Proof.model_validate_json(self.proof)
        except ValidationError as exc:
            raise ProofRefused(f"its proof is not readable ({exc.error_count()} errors)") from None


class DataRejected(RuntimeError):
    """Raised to stop a flow whose data was not approved; the message says who and why."""


class ApprovalInvalid(DataRejected):
    """An automatic run found an approval record of its data that does not verify."""


def decide_by_policy(
    mode: ApprovalMode, report: ScreenReport, require: Require = Require.any
) -> str | None:
    """The policy's own decision, or None when a person has to decide (always under
    approval.require=verified: the policy proves no one)."""
    if require is Require.verified:
        return None
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
    rights: DataRights | None = None,
    decided_at: str | None = None,
) -> ApprovalRecord:
    """The record of a decision; `decided_at` is the time a reviewer signed (default: now)."""
    context = FlowRunContext.get()
    return ApprovalRecord(
        decision="approved" if approved else "rejected",
        reviewer=reviewer,
        comment=comment,
        # orders decisions
        decided_at=decided_at or datetime.now(UTC).isoformat(timespec="microseconds"),
        mode=mode,
        dataset_uri=screened.uri,
        dataset_hash=screened.content_hash,
        report_hash=report_hash(report),
        flow_run_id=str(context.flow_run.id) if context and context.flow_run else None,
        exclude_ids=sorted(set(exclude_ids or [])),
        inputs=rights.inputs if rights is not None else [],
        screen_profile=None if report.profile == DEFAULT_PROFILE else report.profile,
        input_profiles=dict(report.input_profiles),
    )


def request_review(
    screened: DatasetRef,
    report: ScreenReport,
    config: ApprovalConfig,
    review: str = "",
    problems: list[str] | None = None,
    reviewers: Reviewers | None = None,
    rights: DataRights | None = None,
) -> ApprovalRecord:
    """Pause the flow run until a reviewer answers in the UI (or the API); timeout = rejected.
    The form's description is a short summary; `review` is its part that links to the full
    review and says what changed (`review_summary`). A signed answer comes back with the
    reviewer's identity; one whose proof fails raises ProofRefused (it is no decision)."""
    warning = "".join(f"> **Asked again:** {p}.\n\n" for p in problems or [])
    context = FlowRunContext.get()
    run_id = str(context.flow_run.id) if context is not None and context.flow_run else None
    # One paragraph: at 1280x800 the form's fields leave its description ~130 px (five lines); a
    # longer one scrolls in a box of its own (the Prefect UI's), hiding the counts. The dataset,
    # the findings and every flagged and quarantined record are on the review page it links to.
    question = f"**Approve this data for training?** {counts_line(report)}"
    signed = signed_only(config, run_id) if config.require is Require.verified else ""
    unlicensed = len(rights.unlicensed) if rights is not None else 0
    licence = (
        f"**No licence:** {unlicensed} input{'s' if unlicensed > 1 else ''}." if unlicensed else ""
    )
    description = warning + " ".join(p for p in (signed, question, review, licence) if p)
    if run_id is not None:
        log.warning("%s", how_to_answer(run_id, signed=config.reviewers_file is not None))
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
    proof = answer.signed()
    record = make_record(
        screened,
        report,
        config.mode,
        approved=answer.approved,
        reviewer=answer.reviewer,
        comment=answer.comment,
        exclude_ids=answer.exclude_ids,
        rights=rights,
        decided_at=proof.decided_at if proof else None,
    )
    return prove(record, proof, reviewers) if proof else record


def signed_only(config: ApprovalConfig, run_id: str | None) -> str:
    """The form's first words under approval.require=verified: which command decides."""
    run = run_id or "<run-id>"
    needed = config.reviewers_needed
    who = "a listed reviewer" if needed == 1 else f"{needed} different listed reviewers"
    return (
        f"> **Signed decisions only** (approval.require=verified): {who} must answer with "
        f"`tunegate approve {run} --key ~/.ssh/id_ed25519` (or `tunegate reject {run} --key "
        "...`). An answer in this form is recorded as an unverified decision and does not "
        "resume the run."
    )


def ask_until_decided(
    store: Store,
    screened: Screened,
    config: ApprovalConfig,
    policy: ApprovalPolicy,
    review: str,
    problems: list[str],
    *,
    key: bytes,
    reviewers: Reviewers | None,
    rights: DataRights | None = None,
) -> ApprovalRecord:
    """Ask reviewers until the policy has a decision: every answer is kept as a signed record,
    and under a policy other than the default the run asks again while the decisions so far
    do not decide (an unverified answer, an owner's approval, one reviewer of two needed). A
    decision whose proof fails is no decision: it is not kept, and the reviewer is told why.
    Returns the deciding record (saved); no decision by the deadline is a rejection."""
    dataset, report = screened.dataset, screened.report
    deadline = time.monotonic() + config.timeout_seconds
    while True:
        remaining = max(1, round(deadline - time.monotonic()))
        asked = config.model_copy(update={"timeout_seconds": remaining})
        try:
            answer = request_review(dataset, report, asked, review, problems, reviewers, rights)
        except ProofRefused as exc:
            log.warning("approval: a decision was refused: %s", exc)
            problems = [f"a decision was refused, it is no decision: {exc}"]
            continue
        timed_out = answer.reviewer == DEADLINE and time.monotonic() >= deadline - 1
        if policy.is_default or timed_out:
            return save_approval(store, answer, key)
        if answer.reviewer == DEADLINE:  # typed into the form before the deadline
            answer = answer.model_copy(update={"reviewer": f"{DEADLINE} (typed)"})
        answer = save_approval(store, answer, key)
        standing = tally(find_decisions(store, dataset, key, reviewers), policy, person_only=True)
        if standing.approval is not None:
            return standing.approval
        if standing.rejection is not None and standing.rejection.flow_run_id == answer.flow_run_id:
            return standing.rejection  # an earlier run's rejection was shown, not decided again
        problems = [*standing.notes, standing.waiting_line(policy)]
        if policy.verified and not answer.verified:
            problems.insert(0, f"{answer.described()} was recorded as unverified")
        log.info("approval: %s", "; ".join(problems))


@task(name="approve", cache_policy=NONE)
def approve_task(
    backends: Backends,
    screened: Screened,
    config: ApprovalConfig,
    model: str | None = None,
    owners: list[str] | None = None,
    rights: DataRights | None = None,
) -> ApprovalRecord:
    """Reuse an approval of the same data, let the policy decide, or ask reviewers until the
    approval policy (`approval.require`, `reviewers_needed`, the data's `owners`, who may not
    approve it) has a decision (`rights`: the inputs' datasheets, shown in the review and
    signed into the record; their owners count as the data's too). Decisions stick: a
    person's rejection stands against the policy until a person approves, and a `manual` run
    reuses a person's approval only, never the policy's. A rejection of data for `model` is
    announced as a `tunegate.data.rejected` event (a paused run announces itself: Prefect
    emits `prefect.flow-run.Paused`)."""
    store, dataset, report = backends.store, screened.dataset, screened.report
    owners = sorted({*(owners or []), *(rights.owners if rights is not None else [])})
    key, reviewers, policy = config.signing_key(), config.reviewers(), config.policy(owners)
    decisions = find_decisions(store, dataset, key, reviewers)
    for problem in decisions.problems:
        log.warning("approval: %s", problem)
    manual = config.mode is ApprovalMode.manual
    standing = tally(decisions, policy, person_only=manual)
    record = standing.approval.model_copy(update={"reused": True}) if standing.approval else None
    if record is None:
        by_policy = None if manual else decide_by_policy(config.mode, report, config.require)
        if by_policy is not None and decisions.problems:
            raise _rejected(
                screened,
                model,
                "no policy (a tampered approval record)",
                "; ".join(decisions.problems) + f": an approval of {dataset.content_hash[:16]} "
                "was tampered with, so no policy approves it; check the store's approvals/ "
                "folder, then run with approval.mode=manual to have it reviewed again",
                ApprovalInvalid,
            )
        if by_policy is not None and standing.rejection is not None:
            raise _rejected(
                screened,
                model,
                "an earlier reviewer",
                f"this data was {standing.rejection.described()}; a person's rejection stands "
                f"against approval.mode={config.mode.value}: run with approval.mode=manual to "
                "have it reviewed again",
            )
        if by_policy is not None:
            record = make_record(
                dataset,
                report,
                config.mode,
                approved=True,
                reviewer=POLICY,
                comment=by_policy,
                rights=rights,
            )
            record = save_approval(store, record, key)
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
                    kept=kept_changes(store, dataset),
                    rights=rights,
                ),
                description=f"Review of screened data {dataset.content_hash[:16]}",
            )
            earlier = [*_earlier_decisions(decisions, manual), *_so_far(standing, policy)]
            for note in earlier:
                log.info("approval: %s", note)
            record = ask_until_decided(
                store,
                screened,
                config,
                policy,
                review_summary(report, changes, review_id, model or ""),
                [*decisions.problems, *earlier],
                key=key,
                reviewers=reviewers,
                rights=rights,
            )
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


def _so_far(standing: Standing, policy: ApprovalPolicy) -> list[str]:
    """What a reviewer is told of the decisions that do not decide yet (not under the default)."""
    if policy.is_default:
        return []
    return [*standing.notes, *([standing.waiting_line(policy)] if standing.approvers else [])]


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
    the screen changed in kept records, and one line of what changed since the last approval:
    one paragraph, as the form leaves its description about five lines (`request_review`)."""
    link = f"**[Read the full review]({artifact_url(review_id)})**." if review_id else ""
    kept = (
        "**Changed in kept records:** "
        + ", ".join(f"{c.entity} {c.findings}" for c in report.changed)
        + "."
        if report.changed
        else ""
    )
    return " ".join(p for p in (link, kept, changes_summary(changes, model)) if p)


def artifact_url(artifact_id: UUID) -> str:
    """An artifact's page in the Prefect UI (relative to the UI when PREFECT_UI_URL is unset:
    the form is shown by that same UI)."""
    from prefect.settings import PREFECT_UI_URL

    ui = (PREFECT_UI_URL.value() or "").rstrip("/")
    return f"{ui}/artifacts/artifact/{artifact_id}"


def how_to_answer(flow_run_id: str, signed: bool = False) -> str:
    """What a reviewer runs to answer this paused run: the exact commands (with the API they
    must reach: a run's temporary server too) and the run's page in the Prefect UI; `signed`:
    the commands sign with the reviewer's SSH key."""
    from prefect.settings import PREFECT_API_URL, PREFECT_UI_URL

    api, ui = PREFECT_API_URL.value(), PREFECT_UI_URL.value()
    env = f"PREFECT_API_URL={api} " if api else ""
    who = "--key ~/.ssh/id_ed25519" if signed else "--reviewer YOU"
    lines = [
        f"run {flow_run_id} waits for a reviewer's decision on its screened data:",
        f"  {env}tunegate approve {flow_run_id} {who} --comment WHY [--exclude ID ...]",
        f"  {env}tunegate reject {flow_run_id} {who} --comment WHY",
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
