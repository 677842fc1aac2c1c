"""approve: the human gate between screening and training.

The flow pauses with `pause_flow_run(wait_for_input=ApprovalInput)`; the Prefect UI shows the
screening report and a form (decision, reviewer, comment, record ids to exclude). Every decision
becomes an `ApprovalRecord` on the store, bound to the screened dataset's content hash and signed
(HMAC-SHA256) with a key that does not live in the store: a later run over the same screened data
finds the approval and does not pause again, but only when the signature holds and the hash it
names is the dataset's. An edited record, one copied into another dataset's folder, or one signed
with another key is not an approval: a manual run asks for a new review (saying why), an automatic
one stops.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import hmac
import logging
import os
import threading
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NONE
from prefect.context import FlowRunContext
from prefect.exceptions import FlowPauseTimeout, NotPausedError
from prefect.flow_runs import pause_flow_run, resume_flow_run
from prefect.input import RunInput
from pydantic import BaseModel, ConfigDict, Field

from platforms.backends import Backends
from platforms.keys import private_key
from platforms.notify import NotifyConfig, send
from platforms.store import DatasetRef, Store, sha256_text, stable_json
from screening.report import Screened, ScreenReport, report_hash, report_markdown
from tasks.review_changes import changes_markdown, compare

log = logging.getLogger(__name__)
_PAUSE_GRACE_SECONDS = 60


class ApprovalMode(StrEnum):
    manual = "manual"
    auto = "auto"
    auto_if_clean = "auto-if-clean"


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
    """The reviewer's form in the Prefect UI."""

    approved: bool = Field(False, description="Approve this screened data for training?")
    reviewer: str = Field(min_length=1, description="Your name or e-mail, kept in the audit.")
    comment: str = Field("", description="Why (kept in the audit record).")
    exclude_ids: list[str] = Field(
        default_factory=list, description="Record ids to leave out of training."
    )


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


def find_approval(
    store: Store, screened: DatasetRef, key: bytes
) -> tuple[ApprovalRecord | None, list[str]]:
    """The latest valid approval of this exact screened data, if any, and why each record that
    claims to approve it is not valid (each problem names the record's file)."""
    folder = store.path("approvals", screened.content_hash)
    if not store.exists(folder):
        return None, []
    names = sorted(store.fs.ls(store.fs._strip_protocol(folder), detail=False), reverse=True)
    problems = []
    for name in names:
        short = name.rsplit("/", 1)[-1]
        try:
            record = ApprovalRecord.model_validate_json(store.read_text(_uri(store, name)))
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
        decided_at=datetime.now(UTC).isoformat(timespec="seconds"),
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
    changes: str = "",
    problems: list[str] | None = None,
) -> ApprovalRecord:
    """Pause the flow run until a reviewer answers in the UI (or the API); timeout = rejected."""
    warning = "".join(f"> **Asked again:** {p}.\n\n" for p in problems or [])
    description = (
        "## Approve this data for training?\n\n"
        + warning
        + f"Dataset `{screened.uri}` (content hash `{screened.content_hash[:16]}`).\n\n"
        + report_markdown(report)
        + ("\n\n" + changes if changes else "")
    )
    # Initial data only for the description: `with_initial_data(field=value)` redefines the field
    # without its description and constraints (prefect 3.8.8), so an empty reviewer would pass.
    form = ApprovalInput.with_initial_data(description=description)
    comment = f"no decision within {config.timeout_seconds}s"
    timeout_answer = {"approved": False, "reviewer": "timeout", "comment": comment}
    # The server fails a run whose pause expires, so the flow could not record the rejection
    # itself: a timer answers for the reviewer first, and the pause's own timeout is a backstop.
    timer = _answer_later(config.timeout_seconds, timeout_answer)
    try:
        answer = pause_flow_run(
            wait_for_input=form,
            timeout=config.timeout_seconds + _PAUSE_GRACE_SECONDS,
            poll_interval=config.poll_seconds,
        )
    except FlowPauseTimeout:
        answer = ApprovalInput(**timeout_answer)
    finally:
        timer.cancel()
    return make_record(
        screened,
        report,
        config.mode,
        approved=answer.approved,
        reviewer=answer.reviewer,
        comment=answer.comment,
        exclude_ids=answer.exclude_ids,
    )


def _answer_later(seconds: int, answer: dict[str, object]) -> threading.Timer:
    """Resume this flow run with `answer` after `seconds`, unless someone answered already."""
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        raise RuntimeError("approval.mode=manual needs a flow run to pause")
    flow_run_id = context.flow_run.id

    def resume() -> None:
        # NotPaused / timed out: a reviewer answered in the meantime and their answer stands.
        with contextlib.suppress(NotPausedError, FlowPauseTimeout):
            resume_flow_run(flow_run_id, run_input=answer)

    timer = threading.Timer(seconds, contextvars.copy_context().run, args=(resume,))
    timer.daemon = True
    timer.start()
    return timer


def _uri(store: Store, path: str) -> str:
    return path if "://" in path or store.is_local else f"{store.uri.split('://')[0]}://{path}"


@task(name="approve", cache_policy=NONE)
def approve_task(
    backends: Backends,
    screened: Screened,
    config: ApprovalConfig,
    notify: NotifyConfig | None = None,
) -> ApprovalRecord:
    """Reuse an approval of the same data, let the policy decide, or ask a reviewer."""
    store, dataset, report = backends.store, screened.dataset, screened.report
    key = config.signing_key()
    record, problems = find_approval(store, dataset, key)
    for problem in problems:
        log.warning("approval: %s", problem)
    if record is None:
        policy = decide_by_policy(config.mode, report)
        if policy is not None and problems:
            raise ApprovalInvalid(
                "; ".join(problems) + f": an approval of {dataset.content_hash[:16]} was tampered "
                "with, so no policy approves it; check the store's approvals/ folder, then run "
                "with approval.mode=manual to have it reviewed again"
            )
        if policy is not None:
            record = make_record(
                dataset, report, config.mode, approved=True, reviewer="policy", comment=policy
            )
        else:
            if notify is not None:
                send(
                    notify,
                    "approval-waiting",
                    f"{report.kept} screened records wait for a reviewer's approval",
                    {
                        "dataset_hash": dataset.content_hash,
                        "kept": report.kept,
                        "redacted": report.redacted,
                        "quarantined": report.quarantined,
                        "timeout_seconds": config.timeout_seconds,
                    },
                )
            changes = changes_markdown(compare(store, dataset, report))
            create_markdown_artifact(key="review-changes", markdown=changes)
            record = request_review(dataset, report, config, changes, problems)
        record = save_approval(store, record, key)
    create_markdown_artifact(key="approval", markdown=approval_markdown(record))
    log.info(
        "approval: %s by %s%s",
        record.decision,
        record.reviewer,
        " (reused)" if record.reused else "",
    )
    if not record.approved:
        raise DataRejected(
            f"data rejected by {record.reviewer}: {record.comment or 'no comment'}; "
            "nothing was split or trained"
        )
    return record


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
