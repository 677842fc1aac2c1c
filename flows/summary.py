"""What a `retrain` run did: the run summary.

`RunSummary` times each stage (`with summary.stage("train"): ...`), records how it ended
(completed, nothing-new, rejected, failed, gate-failed, cannot-judge) and the details a person reads in `tunegate run`'s
table and `--summary` file; it also turns the run's end into the flow's final Prefect state.
Where a registered model came from (its `Lineage`) is built by the register stage
(tasks/register.py `lineage_of`) from the run's typed results, never read back out of the summary.
"""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from prefect.exceptions import ExternalSignal
from prefect.states import Completed, Failed, State
from pydantic import BaseModel, Field

from platforms.approvals import ApprovalRecord
from platforms.evaluation import EvalReport
from platforms.manifest import DatasetRef
from platforms.model_version import ModelVersion
from platforms.training import TrainingJob
from tasks.approve import DataRejected
from tasks.judgeable import CannotJudge
from tasks.records import NoUsableRecords

log = logging.getLogger(__name__)
DECIDED = {  # a run's status → the name of its Failed state, when tunegate decided the end
    "rejected": "Rejected",
    "gate-failed": "GateFailed",
    "cannot-judge": "CannotJudge",
    "rolled-back": "RolledBack",
}

# Called with the summary when a run is stopped (Ctrl-C, SIGTERM, a cancellation): the command
# that started the run makes sure its process ends in time (cli/stopping.py).
ON_STOP: list[Callable[[RunSummary, signal.Signals | None], None]] = []
# What stops a run from outside: Ctrl-C, SIGTERM (Prefect's TerminationSignal inside a flow, the
# CLI's SystemExit outside one). Not Prefect's Pause or Abort: those are the flow's own control.
STOPS = (KeyboardInterrupt, SystemExit, ExternalSignal)


class StageSummary(BaseModel):
    status: str
    seconds: float
    details: dict[str, Any] = Field(default_factory=dict)


class RunSummary(BaseModel):
    """What a run did, stage by stage: written by `tunegate run --summary PATH`."""

    flow_run_id: str | None = None
    reason: str | None = Field(
        None, description="Why the run started: schedule, a person, new data or drift."
    )
    status: str = "running"
    message: str = ""
    stages: dict[str, StageSummary] = Field(default_factory=dict)
    evaluation: dict[str, Any] | None = None
    model_version: str | None = None
    endpoint: dict[str, Any] | None = None
    tracking_run: str | None = Field(
        None, description="Where the run's MLflow run is seen (flows/run_tracking.py)."
    )
    model_version_url: str | None = Field(
        None, description="The registered version's page in the MLflow UI."
    )

    @contextmanager
    def stage(self, stage: str) -> Iterator[None]:
        """Time the stage run inside the block and keep how it ended (an exception passes on)."""
        log.info("%s: started", stage)
        start = time.perf_counter()
        try:
            yield
        except DataRejected:
            self.stages[stage] = StageSummary(status="rejected", seconds=_since(start))
            raise
        except Exception:
            self.stages[stage] = StageSummary(status="failed", seconds=_since(start))
            raise
        except STOPS as stop:  # Ctrl-C, SIGTERM, a cancellation: what ran has unwound
            self.stages[stage] = StageSummary(status="cancelled", seconds=_since(start))
            self.stopped(stop, stage)
            raise
        self.stages[stage] = StageSummary(status="completed", seconds=_since(start))

    def dataset(self, stage: str, ref: DatasetRef, **extra: Any) -> None:
        """A data stage's details: its counts, content hash and whether it was reused."""
        self.note(stage, **ref.counts, content_hash=ref.content_hash, reused=ref.reused, **extra)

    def note(self, stage: str, **details: Any) -> None:
        """Add details to a stage that ran."""
        self.stages[stage].details.update(details)

    def end(self, status: str, message: str = "") -> None:
        self.status, self.message = status, message

    def approved(self, screened: DatasetRef, approval: ApprovalRecord) -> None:
        self.note(
            "approve",
            content_hash=screened.content_hash,
            decision=approval.decision,
            reviewer=approval.reviewer,
            mode=approval.mode.value,
            reused=approval.reused,
        )

    def trained(self, job: TrainingJob) -> None:
        self.note(
            "train", job=job.name, status=job.status, output_dir=job.output_dir, reused=job.reused
        )

    def evaluated(self, report: EvalReport) -> None:
        self.evaluation = evaluation_summary(report)
        self.note(
            "evaluate", test_records=report.test_records, primary_metric=report.primary_metric
        )
        if not report.gate.passed:
            cannot = report.gate.verdict == "cannot-judge"
            self.stages["evaluate"].status = "cannot-judge" if cannot else "gate-failed"

    def registered(self, version: ModelVersion) -> None:
        self.model_version = f"{version.name}:{version.version}"
        reused = version.lineage.flow_run_id != self.flow_run_id
        self.note("register", name=version.name, version=version.version, reused=reused)

    def completed(self, message: str) -> State:
        """The run ends here, every stage it was asked to run done."""
        self.end("completed")
        return Completed(message=message, data=self)

    def nothing_new(self, message: str) -> State:
        """A deployment's run found nothing new to read: a quiet night ends Completed, status
        `nothing-new`, its message (`nothing new since ...`) in the log and the summary."""
        self.end("nothing-new", message)
        run_logger().info(message)
        return Completed(message=message, data=self)

    def failed(self, status: str, message: str) -> State:
        """The run ends here without a new model serving: `status` says why. A decision of
        tunegate's (rejected data, a gate, a rollback) ends it in a Failed state of its own name,
        so its Prefect event is not `prefect.flow-run.Failed`: the run-failed notification is
        for runs that broke, the decision's own event (platforms/notify.py) tells the rest."""
        self.end(status, message)
        return Failed(message=message, data=self, name=DECIDED.get(status, "Failed"))

    def stopped(self, stop: BaseException, stage: str | None = None) -> None:
        """The run was stopped by a signal or a cancellation: it ends `cancelled`, and whoever
        started it in this process is told (once), so the process ends in time."""
        if self.status == "cancelled":
            return
        during = f" during {stage}" if stage else ""
        by = stop_signal(stop)
        self.end("cancelled", f"stopped by {by.name if by else type(stop).__name__}{during}")
        log.warning("run %s", self.message)
        for hook in ON_STOP:
            hook(self, by)

    def failed_with(self, exc: Exception) -> State:
        """The run ends on a stage's exception: rejected data, nothing usable, or a failure (the
        failed task has logged its traceback; the message names the stage)."""
        if isinstance(exc, DataRejected):
            return self.failed("rejected", str(exc))
        if isinstance(exc, CannotJudge):
            return self.failed("cannot-judge", str(exc))
        if isinstance(exc, NoUsableRecords):
            return self.failed("no-usable-records", str(exc))
        stage = next((n for n, s in self.stages.items() if s.status == "failed"), "setup")
        return self.failed("failed", f"{stage} failed: {type(exc).__name__}: {exc}")


def evaluation_summary(report: EvalReport) -> dict[str, Any]:
    """The run summary's `evaluation`: every model's metrics and the gate's decision."""
    return {
        "base": report.base,
        "candidate": report.candidate,
        "champion": report.champion,
        "champion_version": report.champion_version,
        "primary_metric": report.primary_metric,
        "gate": {
            "passed": report.gate.passed,
            "verdict": report.gate.verdict,
            "reasons": report.gate.reasons,
        },
    }


def gate_line(evaluation: dict[str, Any]) -> str:
    """One line a person reads under the run's table: the primary metric of base, candidate and
    champion, and the gate's decision with its reasons."""
    metric = evaluation["primary_metric"]
    line = (
        f"{metric}: base {evaluation['base'][metric]:.1f} → "
        f"candidate {evaluation['candidate'][metric]:.1f}"
    )
    if evaluation.get("champion") is not None:
        line += (
            f" (champion v{evaluation['champion_version']}: {evaluation['champion'][metric]:.1f})"
        )
    gate = evaluation["gate"]
    if gate["passed"]:
        return line + "; gate passed"
    word = "cannot judge" if gate.get("verdict") == "cannot-judge" else "FAILED"
    return line + f"; gate {word}: " + "; ".join(gate["reasons"])


def stop_signal(stop: BaseException) -> signal.Signals | None:
    """The signal behind a stop: SIGINT (KeyboardInterrupt), Prefect's TerminationSignal, or the
    CLI's SystemExit(128 + signal)."""
    if isinstance(stop, KeyboardInterrupt):
        return signal.SIGINT
    number = getattr(stop, "signal", None)
    if isinstance(stop, SystemExit) and isinstance(stop.code, int) and stop.code > 128:
        number = stop.code - 128
    try:
        return signal.Signals(number) if isinstance(number, int) else None
    except ValueError:
        return None


def run_logger() -> logging.Logger | logging.LoggerAdapter:
    """The flow run's logger (its lines go to the run's log in the UI), this module's outside a run."""
    from prefect.exceptions import MissingContextError
    from prefect.logging import get_run_logger

    try:
        return get_run_logger()
    except MissingContextError:
        return log


def _since(start: float) -> float:
    return round(time.perf_counter() - start, 3)
